import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Logging
import Testing

/// Shared helpers for the decision, parsing, error, observability and transport suites.
///
/// Everything is nested in this enum so that it cannot collide with helpers other suites add to the test module.
enum DecisionFixtures {
    // MARK: - Thread-safe test state

    /// A value shared between a test and the closures it hands to Courier.
    final class Shared<Value: Sendable>: Sendable {
        private let box: LockedBox<Value>

        init(_ value: Value) { box = LockedBox(value) }

        /// The current value.
        var value: Value { box.withLock { $0 } }

        /// Changes the value and returns whatever `body` returns.
        @discardableResult
        func update<Result: Sendable>(_ body: @Sendable (inout Value) -> Result) -> Result {
            box.withLock { body(&$0) }
        }
    }

    /// Counts calls; `next()` returns the 1-based number of this call.
    final class Counter: Sendable {
        private let shared = Shared(0)

        /// How many times ``next()`` was called.
        var count: Int { shared.value }

        /// Counts one call and returns its number.
        @discardableResult
        func next() -> Int {
            shared.update {
                $0 += 1
                return $0
            }
        }
    }

    /// Records strings in the order they arrive.
    final class Journal: Sendable {
        private let shared = Shared<[String]>([])

        /// Everything recorded, in order.
        var entries: [String] { shared.value }

        /// Records `entry`.
        func record(_ entry: String) { shared.update { $0.append(entry) } }
    }

    /// An error of the test's own, to check how Courier wraps or passes errors through.
    struct Failure: Error, Equatable, CustomStringConvertible {
        var reason: String
        var description: String { "Failure(\(reason))" }
    }

    // MARK: - Clocks

    /// The instant of the test clocks: an offset from an arbitrary zero.
    struct Instant: InstantProtocol {
        var offset: Duration

        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    /// A clock whose `sleep` records the requested duration, advances its time, and returns at once.
    final class RecordingClock: Clock {
        private let state = Shared((now: Instant(offset: .zero), sleeps: [Duration]()))

        /// The durations slept, in order.
        var sleeps: [Duration] { state.value.sleeps }

        var now: Instant { state.value.now }
        var minimumResolution: Duration { .zero }

        func sleep(until deadline: Instant, tolerance: Duration?) async throws {
            try Task.checkCancellation()
            state.update { state in
                state.sleeps.append(state.now.duration(to: deadline))
                state.now = max(state.now, deadline)
            }
        }
    }

    /// A clock whose `sleep` announces itself on ``sleepStarted`` and then suspends until the task is cancelled.
    final class SuspendingClock: Clock {
        /// Yields the duration of each sleep as it begins.
        let sleepStarted: AsyncStream<Duration>
        private let started: AsyncStream<Duration>.Continuation

        init() {
            (sleepStarted, started) = AsyncStream.makeStream()
        }

        var now: Instant { Instant(offset: .zero) }
        var minimumResolution: Duration { .zero }

        func sleep(until deadline: Instant, tolerance: Duration?) async throws {
            started.yield(now.duration(to: deadline))
            let (never, finish) = AsyncStream<Never>.makeStream()
            await withTaskCancellationHandler {
                for await _ in never {}
            } onCancel: {
                finish.finish()
            }
            throw CancellationError()
        }
    }

    // MARK: - Logging

    /// Collects what a ``CapturingLogHandler`` logs.
    final class LogCapture: Sendable {
        /// One logged line.
        struct Entry: Sendable {
            var level: Logger.Level
            var message: String
            var metadata: String
        }

        private let shared = Shared<[Entry]>([])

        /// Everything logged, in order.
        var entries: [Entry] { shared.value }
        /// The messages logged, in order.
        var messages: [String] { entries.map(\.message) }
        /// Every logged message with its metadata, for searches that must cover everything.
        var allText: [String] { entries.map { "\($0.message) \($0.metadata)" } }

        func append(_ entry: Entry) { shared.update { $0.append(entry) } }

        /// A logger writing into this capture at `level`.
        func logger(level: Logger.Level = .debug) -> Logger {
            var logger = Logger(label: "courier.tests") { _ in CapturingLogHandler(capture: self) }
            logger.logLevel = level
            return logger
        }
    }

    /// A `LogHandler` that keeps every line in a ``LogCapture``.
    struct CapturingLogHandler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
            capture.append(
                LogCapture.Entry(level: event.level, message: event.message.description, metadata: "\(merged)")
            )
        }
    }

    // MARK: - Transports

    /// Chunks that count how many were pulled, so a test can see where reading stopped.
    struct CountingChunks: AsyncSequence, Sendable {
        typealias Element = ArraySlice<UInt8>

        let chunks: [[UInt8]]
        let pulled: Counter

        struct AsyncIterator: AsyncIteratorProtocol {
            var remaining: ArraySlice<[UInt8]>
            let pulled: Counter

            mutating func next() async -> ArraySlice<UInt8>? {
                guard let chunk = remaining.popFirst() else { return nil }
                pulled.next()
                return ArraySlice(chunk)
            }
        }

        func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(remaining: ArraySlice(chunks), pulled: pulled)
        }
    }

    /// A transport that answers every request with a chunked body of unknown length (no `Content-Length`), as a
    /// real server streaming a response does.
    struct ChunkedTransport: Transport {
        var status: Int = 200
        var chunks: [[UInt8]]
        let pulled = Counter()
        let sent = Counter()

        func send(_ request: OutgoingRequest, context: TransportContext) async throws -> TransportResponse {
            sent.next()
            let body = MessageBody(
                CountingChunks(chunks: chunks, pulled: pulled),
                length: .unknown,
                iterationBehavior: .single
            )
            return TransportResponse(head: HTTPResponse(status: .init(code: status)), body: body)
        }
    }

    // MARK: - Requests and responses

    /// A probe whose response is decoded as JSON (with `decoder`, or the client's when `nil`).
    static func jsonProbe<Value: Decodable & Sendable>(
        _ type: Value.Type = Value.self,
        method: HTTPRequest.Method = .get,
        path: String = "/probe",
        decisions: [any Decision] = [.validateStatus()],
        decoder: JSONDecoder? = nil
    ) -> Probe<Value> {
        Probe(
            method: method,
            path: path,
            decisionList: decisions,
            parse: { response, context in try JSONParser<Value>(decoder: decoder).parse(response, context: context) }
        )
    }

    /// A string probe with the given method, path and decisions.
    static func textProbe(
        method: HTTPRequest.Method = .get,
        path: String = "/probe",
        decisions: [any Decision] = [.validateStatus()]
    ) -> Probe<String> {
        var probe = Probe(method: method, path: path)
        probe.decisionList = decisions
        return probe
    }

    /// A decision named `name` that restarts the call, with the same decisions, whenever the status is `code`.
    static func restart(on code: Int, name: String) -> ClosureDecision {
        ClosureDecision(
            name: name,
            when: { $0.status.code == code },
            { _, context in .restart(with: context.decisions) }
        )
    }

    /// A response as a decision sees it.
    static func received(_ status: Int, body: String = "", headerFields: HTTPFields = [:]) -> ReceivedResponse {
        ReceivedResponse(
            head: HTTPResponse(status: .init(code: status), headerFields: headerFields),
            body: Data(body.utf8)
        )
    }

    /// A decision context for calling one decision directly.
    static func context(
        method: HTTPRequest.Method = .get,
        canResendBody: Bool = true,
        decisions: [any Decision] = [],
        index: Int = 0,
        clock: any Clock<Duration> = RecordingClock(),
        jsonDecoder: JSONDecoder = JSONDecoder()
    ) -> DecisionContext {
        DecisionContext(
            request: HTTPRequest(method: method, scheme: "https", authority: "api.example.com", path: "/probe"),
            canResendBody: canResendBody,
            decisions: decisions,
            index: index,
            clock: clock,
            jsonDecoder: jsonDecoder
        )
    }

    /// A one-shot streamed body of `text`, in one chunk.
    static func oneShotBody(_ text: String, length: MessageBody.Length? = nil) -> MessageBody {
        let bytes = Array(text.utf8)
        let stream = AsyncStream<ArraySlice<UInt8>> { continuation in
            continuation.yield(ArraySlice(bytes))
            continuation.finish()
        }
        return MessageBody(stream, length: length ?? .known(Int64(bytes.count)), iterationBehavior: .single)
    }

    /// Reads every chunk of `body` into one array.
    static func drain(_ body: MessageBody) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in body { bytes.append(contentsOf: chunk) }
        return bytes
    }
}

extension DecisionAction {
    /// The action's case name, for assertions.
    var caseName: String {
        switch self {
        case .continue: "continue"
        case .restart: "restart"
        case .fail: "fail"
        case .done: "done"
        }
    }

    /// The error of a `.fail`, else `nil`.
    var failure: (any Error)? {
        if case .fail(let error) = self { return error }
        return nil
    }

    /// The decisions of a `.restart`, else `nil`.
    var restartDecisions: [any Decision]? {
        if case .restart(let decisions, _) = self { return decisions }
        return nil
    }

    /// The response of a `.continue` or `.done`, else `nil`.
    var response: ReceivedResponse? {
        switch self {
        case .continue(let response), .done(let response): response
        case .restart, .fail: nil
        }
    }
}

extension Array {
    /// The single element, or `nil` when there are none or several.
    var onlyElement: Element? { count == 1 ? first : nil }
}
