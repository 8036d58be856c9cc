import Foundation
import HTTPTypes

/// Reads a response body into memory the way the pipeline does: HEAD, 1xx, 204 and 304 responses have none.
enum BodyReader {
    static func read(_ response: TransportResponse, for method: HTTPRequest.Method, limit: Int) async throws -> Data {
        let code = response.head.status.code
        if method == .head || code == 204 || code == 304 || (100..<200).contains(code) {
            return Data()
        }
        return try await response.body.collect(upTo: limit)
    }
}
