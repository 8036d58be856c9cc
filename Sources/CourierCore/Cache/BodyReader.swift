import Foundation
import HTTPTypes

/// Reads a response body into memory the way the pipeline does: HEAD, 1xx, 204 and 304 responses have none.
enum BodyReader {
    /// Reads `response`'s body within `limit`; HEAD, 1xx, 204 and 304 responses give no bytes, but the transport's
    /// (empty) body is still read to its end: AsyncHTTPClient closes a connection whose response was dropped unread
    /// instead of returning it to the pool (a revalidation's 304 would cost the next request a new connection).
    ///
    /// The cache's paths; the pipeline keeps its own copy (`Pipeline.readBody`): calling this one from there cost
    /// every GET one more `malloc` (a task-allocator slab) in `courier-allocations`, even inlined.
    static nonisolated(nonsending) func read(
        _ response: TransportResponse, for method: HTTPRequest.Method, limit: Int
    ) async throws -> Data {
        if ResponseFraming.hasNoBody(response.head.status, answering: method) {
            _ = try? await response.body.collect(upTo: limit)
            return Data()
        }
        return try await response.body.collect(upTo: limit)
    }
}
