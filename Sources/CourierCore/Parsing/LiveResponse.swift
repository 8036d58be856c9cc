public import HTTPTypes

/// A response whose body is still arriving: the call returns as soon as the head is in and the decisions accepted
/// it, and the body streams as you iterate.
///
/// Declare a request with `Response == LiveResponse` (the default parser for it is ``LiveResponseParser``) and
/// send it as usual. The decision chain runs on the head before a single byte is handed out: a 401 refreshes the
/// credential and restarts, a 503 is retried, a status the validation refuses throws, and redirects are followed.
/// Only then does ``Client/send(_:)`` return.
///
/// ```swift
/// struct Completion: Request {
///     typealias Response = LiveResponse
///     var method: HTTPRequest.Method { .post }
///     var path: String { "/v1/completions" }
///     var body: RequestBody? { .json(prompt) }
///     let prompt: Prompt
/// }
///
/// let live = try await client.send(Completion(prompt: prompt))
/// for try await event in live.serverSentEvents() { print(event.data) }
/// ```
///
/// - **Backpressure.** Nothing is read from the connection faster than you iterate (beyond the transport's small
///   buffer).
/// - **Limits.** ``Client/Configuration/maxResponseBodySize`` does not apply to a live body (it may be endless);
///   a request that sets its own ``Request/maxResponseBodySize`` asks for one, and the stream fails with
///   ``CourierError/Code/bodyTooLarge`` once more bytes than that arrived (the chunks before it are handed out). The
///   transport's idle timeout applies between any two chunks. The request's `timeout` bounds the time to the head.
/// - **Cancellation.** Cancelling the iterating task fails the next read with `CancellationError` and closes the
///   connection; so does dropping the response before its end.
/// - **Observability.** The call stays open until the body ends: its log line, its `finished` (or `failed`) event
///   and its trace span come at the end of the stream, with the bytes read, and the activity tracker counts it as
///   in flight until then.
///
/// A live response can be iterated once.
public struct LiveResponse: AsyncSequence, Sendable {
    /// A chunk of the body, as it arrived.
    public typealias Element = ArraySlice<UInt8>
    /// Any error: a transport failure (``CourierError/Code/truncatedResponse``, ``CourierError/Code/idleTimeout``)
    /// or `CancellationError`.
    public typealias Failure = any Error

    /// The response head: status and header fields.
    public let head: HTTPResponse
    let body: MessageBody
    let lease: StreamLease?
    /// The most bytes the whole body may have (the request's own `maxResponseBodySize`), or `nil`.
    let limit: Int?

    /// Creates a live response over `body` (for tests and custom transports' parsers).
    public init(head: HTTPResponse, body: MessageBody) {
        self.init(head: head, body: body, lease: nil, limit: nil)
    }

    init(head: HTTPResponse, body: MessageBody, lease: StreamLease?, limit: Int?) {
        self.head = head
        self.body = body
        self.lease = lease
        self.limit = limit
    }

    /// This response with its body limited to `limit` bytes (or to its own limit, when that is lower): for a body
    /// read whole after all, such as a generated client's JSON.
    package func limited(to limit: Int) -> LiveResponse {
        LiveResponse(head: head, body: body, lease: lease, limit: Swift.min(self.limit ?? limit, limit))
    }

    /// Ends the call with `error` without reading the body (the connection closes once the response is let go);
    /// returns the error as the call finalized it (redacted, with its trace), to throw.
    package func end(with error: any Error) -> any Error {
        lease?.finish(error) ?? error
    }

    /// The response status.
    public var status: HTTPResponse.Status { head.status }
    /// The response header fields.
    public var headerFields: HTTPFields { head.headerFields }

    /// The body's length when the server declared it (`Content-Length`), or ``MessageBody/Length/unknown``.
    public var length: MessageBody.Length { body.length }

    /// Starts reading the body.
    public func makeAsyncIterator() -> AsyncIterator {
        let (base, readsBody) = body.makeIterator()
        // A second iterator only throws `bodyNotReplayable`: that misuse is not the end of the call, which the
        // first iterator is still reading, so it gets no lease.
        return AsyncIterator(base: base, lease: readsBody ? lease : nil, limit: limit, head: head)
    }

    /// Reads the chunks of a ``LiveResponse``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var base: MessageBody.AsyncIterator
        private let lease: StreamLease?
        private let limit: Int?
        private let head: HTTPResponse
        private var received = 0
        /// Whether the body went past `limit`: nothing more is read.
        private var isOverLimit = false

        init(base: MessageBody.AsyncIterator, lease: StreamLease?, limit: Int?, head: HTTPResponse) {
            self.base = base
            self.lease = lease
            self.limit = limit
            self.head = head
        }

        /// The next chunk, or `nil` at the end of the body.
        public mutating func next() async throws -> ArraySlice<UInt8>? {
            guard !isOverLimit else { return nil }
            let chunk: ArraySlice<UInt8>?
            do {
                chunk = try await base.next()
            } catch {
                throw lease?.finish(error) ?? error
            }
            if let chunk {
                received += chunk.count
                if let limit, received > limit {
                    // Nothing more is read; the connection closes once the response is let go.
                    isOverLimit = true
                    let error = CourierError(
                        code: .bodyTooLarge, stage: .transport,
                        message: "the stream passed its maxResponseBodySize (\(limit) bytes)", response: head)
                    throw lease?.finish(error) ?? error
                }
                lease?.received(chunk.count)
            } else {
                _ = lease?.finish(nil)
            }
            return chunk
        }
    }
}

/// Hands out a live body without reading it: the parser of requests whose `Response` is ``LiveResponse``.
public struct LiveResponseParser: StreamingResponseParser {
    /// A live response.
    public typealias Output = LiveResponse

    /// Creates the parser.
    public init() {}

    /// Wraps the body; reads nothing.
    public func parse(_ head: HTTPResponse, body: MessageBody, context: ParseContext) async throws -> LiveResponse {
        LiveResponse(head: head, body: body)
    }
}

extension Request where Response == LiveResponse {
    /// Returns the body as it arrives (``LiveResponseParser``).
    public var parser: any ResponseParser<Response> { LiveResponseParser() }
}

/// Reports the end of a live body to its call, exactly once: when iteration reaches the end, fails, or the last
/// holder of the response lets go before that.
///
/// What it counts lives in the call's record, under the record's lock: a lock of its own was one more allocation per
/// live call (issue #17).
final class StreamLease: Sendable {
    private let client: Client
    private let record: CallState
    private let start: Moment

    init(client: Client, record: CallState, start: Moment) {
        self.client = client
        self.record = record
        self.start = start
    }

    /// Ends the call once, with the bytes read and the error the body ended with (`nil`: its end, or abandoned): the
    /// activity count, the log line and the `finished` or `failed` event. Returns the error to hand to the reader.
    private func onEnd(_ error: (any Error)?) -> (any Error)? {
        client.configuration.activity?.end()
        return CallClosing.close(record, start: start, error: error, client: client)
    }

    func received(_ count: Int) {
        record.withLock { $0.bodySize = ($0.bodySize ?? 0) + count }
    }

    /// Marks the stream finished (a body that delivered nothing has size 0); `false` when it already was.
    private func markFinished() -> Bool {
        record.withLock { record in
            guard !record.streamFinished else { return false }
            record.streamFinished = true
            record.bodySize = record.bodySize ?? 0
            return true
        }
    }

    /// Ends the stream with `error` (or its end); returns the error to throw, as the call finalized it.
    func finish(_ error: (any Error)?) -> (any Error)? {
        guard markFinished() else { return error }
        return onEnd(error) ?? error
    }

    deinit {
        if markFinished() { _ = onEnd(nil) }
    }
}
