public import CourierCore
public import Foundation
public import HTTPTypes

/// A `Transport` that answers from a script instead of the network, and records what it was sent.
///
/// Stub responses per route (method and path) or queue them in order; inject delays and faults; inspect
/// ``recordedRequests`` (the requests as they left the adapters, bodies read into memory) in assertions. A
/// request nothing matches fails loudly: the error names the request as a cURL command line.
///
/// Routes are tried in the order they were added; a route with a list of responses answers with them in turn
/// and then stops matching. A handler route answers every time. The queue (``enqueue(_:)``) answers requests no
/// route matched.
///
/// ```swift
/// let mock = MockTransport()
/// mock.stub(.post, "/post", with: .json(raw: #"{"form":{"foo":"bar"}}"#))
/// let client = Client(server: Server(baseURL: URL(string: "https://api.test")!), transport: mock)
/// ```
public final class MockTransport: Transport {
    /// A request as the transport received it.
    public struct RecordedRequest: Sendable {
        /// The request head, as sent (not redacted: tests may assert on secrets).
        public var head: HTTPRequest
        /// The body's bytes, or `nil` when the request had no body.
        public var body: Data?
        /// The attempt number Courier gave this send.
        public var attempt: Int

        /// The body as UTF-8 text.
        public var bodyText: String? { body.map { String(decoding: $0, as: UTF8.self) } }
        /// The path without the query.
        public var pathWithoutQuery: String { String((head.path ?? "").prefix { $0 != "?" }) }
        /// The raw (percent-encoded) query, without `?`, or `nil` when there is none.
        public var query: String? {
            guard let path = head.path, let mark = path.firstIndex(of: "?") else { return nil }
            return String(path[path.index(after: mark)...])
        }
    }

    private struct Route: Sendable {
        let method: HTTPRequest.Method?
        let path: String
        var responses: [MockResponse]
        let handler: (@Sendable (RecordedRequest) async throws -> MockResponse)?

        func matches(_ request: RecordedRequest) -> Bool {
            if let method, method != request.head.method { return false }
            guard path == request.head.path || path == request.pathWithoutQuery else { return false }
            return handler != nil || !responses.isEmpty
        }
    }

    private struct State: Sendable {
        var routes: [Route] = []
        var queue: [MockResponse] = []
        var recorded: [RecordedRequest] = []
    }

    private let state = LockedBox(State())
    private let clock: any Clock<Duration>

    /// Creates an empty mock transport.
    ///
    /// - Parameter clock: The clock delays sleep on; inject one to make delays instant in tests.
    public init(clock: any Clock<Duration> = ContinuousClock()) {
        self.clock = clock
    }

    /// Answers requests for `method` (any method when `nil`) and `path` with `responses`, in turn.
    ///
    /// `path` matches the request's full path (with the base URL's prefix) either without its query, or with it
    /// exactly as Courier sends it: keys in the query encoder's order (sorted by default), percent-encoded
    /// (`/search?page=2&q=swift%20ui`). A request that matches no stub fails with its cURL line, which shows that
    /// form.
    public func stub(_ method: HTTPRequest.Method? = nil, _ path: String, with responses: [MockResponse]) {
        state.withLock { $0.routes.append(Route(method: method, path: path, responses: responses, handler: nil)) }
    }

    /// Answers requests for `method` and `path` with `response`, once.
    public func stub(_ method: HTTPRequest.Method? = nil, _ path: String, with response: MockResponse) {
        stub(method, path, with: [response])
    }

    /// Answers every request for `method` and `path` by calling `handler`.
    public func stub(
        _ method: HTTPRequest.Method? = nil,
        _ path: String,
        handler: @escaping @Sendable (RecordedRequest) async throws -> MockResponse
    ) {
        state.withLock { $0.routes.append(Route(method: method, path: path, responses: [], handler: handler)) }
    }

    /// Queues a response for the next request that no route matches.
    public func enqueue(_ response: MockResponse) {
        state.withLock { $0.queue.append(response) }
    }

    /// Every request received so far, in order.
    public var recordedRequests: [RecordedRequest] { state.withLock { $0.recorded } }

    /// Sends a request by answering from the script.
    public func send(_ request: OutgoingRequest, context: TransportContext) async throws -> TransportResponse {
        var body: Data?
        if let requestBody = request.body {
            body = try await requestBody.collect(upTo: Int.max)
        }
        let recorded = RecordedRequest(head: request.head, body: body, attempt: context.attempt)
        // As the real transports do: a body that produced another number of bytes than it declared (and than the
        // `Content-Length` the validator set from it) fails the send, recorded but not answered.
        if let body, case .known(let declared) = request.body?.length, declared != Int64(body.count) {
            state.withLock { $0.recorded.append(recorded) }
            throw CourierError(
                code: .invalidBody,
                stage: .transport,
                message: "the request body's length does not match the length it declared: it produced "
                    + "\(body.count) bytes, and declared \(declared)"
            )
        }
        let match = state.withLock { state -> Match in
            state.recorded.append(recorded)
            if let index = state.routes.firstIndex(where: { $0.matches(recorded) }) {
                if let handler = state.routes[index].handler { return .handler(handler) }
                return .response(state.routes[index].responses.removeFirst())
            }
            if !state.queue.isEmpty { return .response(state.queue.removeFirst()) }
            return .none
        }
        let response: MockResponse
        switch match {
        case .response(let scripted): response = scripted
        case .handler(let handler): response = try await handler(recorded)
        case .none:
            throw CourierError(
                code: .unexpectedResponse,
                stage: .transport,
                message: "MockTransport has no stub for this request: \(Self.describe(request))"
            )
        }
        return try await answer(with: response, to: request.head.method)
    }

    private enum Match {
        case response(MockResponse)
        case handler(@Sendable (RecordedRequest) async throws -> MockResponse)
        case none
    }

    /// The unmatched request, as a cURL command line without its body (a body may hold secrets no redactor knows
    /// of, and this message reaches logs): its size instead.
    private static func describe(_ request: OutgoingRequest) -> String {
        let line = OutgoingRequest(head: request.head).cURLDescription(redactor: .default)
        guard let body = request.body else { return line }
        switch body.length {
        case .known(let count): return line + " # body of \(count) bytes not shown"
        case .unknown: return line + " # streamed body not shown"
        }
    }

    private func answer(with response: MockResponse, to method: HTTPRequest.Method) async throws -> TransportResponse {
        if let delay = response.delay {
            try await clock.sleep(for: delay, tolerance: nil)
        }
        switch response.fault {
        case .failBeforeResponse(let error):
            throw error
        case .stall:
            try await Self.suspendUntilCancelled()
        default:
            break
        }
        try Task.checkCancellation()
        let head = HTTPResponse(status: response.status, headerFields: response.headerFields)
        return TransportResponse(head: head, body: try Self.body(for: response, head: head, method: method))
    }

    /// The body a real transport would hand over for `response`: framed by its head as every transport frames it
    /// (``ResponseFraming``: no body for a HEAD, 1xx, 204 or 304; conflicting framing and codings no transport decodes
    /// refused; a body shorter than its `Content-Length` ends with `truncatedResponse`, a longer one is cut there),
    /// read once, and read in the reading task, so that cancelling it fails the next read.
    ///
    /// A stub's body is the bytes as the transport delivers them: with a `Content-Encoding`, the decoded bytes.
    private static func body(for response: MockResponse, head: HTTPResponse, method: HTTPRequest.Method) throws
        -> MessageBody
    {
        let framing = try ResponseFraming(of: head, method: method)
        var count = response.chunks.reduce(0) { $0 + $1.count }
        var ending = MockBody.Ending.end
        if let expected = framing.expectedLength {
            if Int64(count) > expected {
                count = Int(expected)
            } else if Int64(count) < expected {
                ending = .fail(
                    CourierError(
                        code: .truncatedResponse,
                        stage: .transport,
                        message: "truncated: received \(count) of \(expected) bytes",
                        response: head
                    ))
            }
        }
        // A response that has no body (to a HEAD, a 204, a 304) ends with its head on a real transport: a body fault
        // does not apply to it (a stalled one hung the pipeline's drain until the call's deadline).
        switch framing.expectedLength == 0 ? nil : response.fault {
        case .resetMidBody(let afterBytes):
            count = min(count, max(0, afterBytes))
            ending = .fail(
                CourierError(
                    code: .truncatedResponse,
                    stage: .transport,
                    message: "truncated: the connection was reset after \(count) body bytes (MockFault.resetMidBody)",
                    response: head
                ))
        case .stallBody(let afterBytes):
            count = min(count, max(0, afterBytes))
            ending = .stall
        default:
            break
        }
        var chunks: [ArraySlice<UInt8>] = []
        var remaining = count
        for chunk in response.chunks where remaining > 0 {
            let taken = [UInt8](chunk.prefix(remaining))
            remaining -= taken.count
            chunks.append(ArraySlice(taken))
        }
        let length: MessageBody.Length = framing.expectedLength.map { .known($0) } ?? .unknown
        return MessageBody(MockBody(chunks: chunks, ending: ending), length: length, iterationBehavior: .single)
    }

    /// Suspends until the current task is cancelled, then throws `CancellationError`.
    static func suspendUntilCancelled() async throws {
        let (stream, continuation) = AsyncStream<Never>.makeStream()
        await withTaskCancellationHandler {
            for await _ in stream {}
        } onCancel: {
            continuation.finish()
        }
        throw CancellationError()
    }
}

/// A mock response body: its chunks, then its end. It runs in the task that reads it, so cancelling that task fails
/// the next read with `CancellationError`, as on the real transports.
struct MockBody: AsyncSequence, Sendable {
    /// How the body ends after its chunks.
    enum Ending: Sendable {
        /// Normally.
        case end
        /// With this error.
        case fail(any Error)
        /// Never: the read waits until its task is cancelled.
        case stall
    }

    let chunks: [ArraySlice<UInt8>]
    let ending: Ending

    struct AsyncIterator: AsyncIteratorProtocol {
        let chunks: [ArraySlice<UInt8>]
        let ending: Ending
        var index = 0

        mutating func next() async throws -> ArraySlice<UInt8>? {
            try Task.checkCancellation()
            if index < chunks.count {
                defer { index += 1 }
                return chunks[index]
            }
            switch ending {
            case .end:
                return nil
            case .fail(let error):
                throw error
            case .stall:
                try await MockTransport.suspendUntilCancelled()
                return nil
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunks: chunks, ending: ending) }
}
