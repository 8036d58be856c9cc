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

    /// Whether the failure to read the body of `head` leaves its status to the decisions, as the pipeline does
    /// (`Pipeline.settle`): a response that is not a success, over the limit or cut short (a 503 with its
    /// `Retry-After`, a 404 under a status check). The cache and de-duplication hand such a body on as
    /// ``failing(_:)``, so that the pipeline sees the status and the error, as without them.
    static func keepsStatus(of head: HTTPResponse, after error: CourierError) -> Bool {
        head.status.kind != .successful && (error.code == .bodyTooLarge || error.code == .truncatedResponse)
    }

    /// A body that fails with `error` when read.
    static func failing(_ error: CourierError) -> MessageBody {
        let stream = AsyncThrowingStream<ArraySlice<UInt8>, any Error> { $0.finish(throwing: error) }
        return MessageBody(stream, length: .unknown, iterationBehavior: .single)
    }
}
