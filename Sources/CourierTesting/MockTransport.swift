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
    /// `path` matches the request's full path (with the base URL's prefix) either with or without its query.
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
                message: "MockTransport has no stub for this request: \(request.cURLDescription(redactor: .default))"
            )
        }
        return try await answer(with: response)
    }

    private enum Match {
        case response(MockResponse)
        case handler(@Sendable (RecordedRequest) async throws -> MockResponse)
        case none
    }

    private func answer(with response: MockResponse) async throws -> TransportResponse {
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
        return TransportResponse(head: head, body: Self.body(for: response))
    }

    private static func body(for response: MockResponse) -> MessageBody {
        let bytes = [UInt8](response.body)
        switch response.fault {
        case .resetMidBody(let count):
            let prefix = Array(bytes.prefix(count))
            let stream = AsyncThrowingStream<ArraySlice<UInt8>, any Error> { continuation in
                if !prefix.isEmpty { continuation.yield(ArraySlice(prefix)) }
                continuation.finish(
                    throwing: CourierError(
                        code: .connectionFailed,
                        stage: .transport,
                        message: "connection reset by peer after \(prefix.count) body bytes (MockFault.resetMidBody)"
                    )
                )
            }
            return MessageBody(stream, length: .known(Int64(bytes.count)), iterationBehavior: .single)
        case .stallBody(let count):
            let prefix = Array(bytes.prefix(count))
            let stream = AsyncThrowingStream<ArraySlice<UInt8>, any Error> { continuation in
                if !prefix.isEmpty { continuation.yield(ArraySlice(prefix)) }
                let waiter = Task {
                    do {
                        try await suspendUntilCancelled()
                    } catch {
                        continuation.finish(throwing: error)
                    }
                }
                continuation.onTermination = { _ in waiter.cancel() }
            }
            return MessageBody(stream, length: .known(Int64(bytes.count)), iterationBehavior: .single)
        default:
            let chunks = response.chunks.map { ArraySlice([UInt8]($0)) }
            if chunks.count <= 1 { return MessageBody(bytes) }
            let length: MessageBody.Length =
                response.headerFields[.contentLength] != nil ? .known(Int64(bytes.count)) : .unknown
            return MessageBody(chunks.async, length: length, iterationBehavior: .multiple)
        }
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

/// An async sequence over an array, for chunked mock bodies.
struct ArrayAsyncSequence<Element: Sendable>: AsyncSequence, Sendable {
    let elements: [Element]

    struct AsyncIterator: AsyncIteratorProtocol {
        var iterator: IndexingIterator<[Element]>
        mutating func next() async -> Element? { iterator.next() }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(iterator: elements.makeIterator()) }
}

extension Array where Element: Sendable {
    var async: ArrayAsyncSequence<Element> { ArrayAsyncSequence(elements: self) }
}
