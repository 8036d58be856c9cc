import Foundation
import HTTPTypes
import Logging

/// How an ``EventSource`` reconnects after its stream drops.
public struct ReconnectPolicy: Hashable, Sendable {
    /// How many reconnects in a row may deliver no event before the source gives up with
    /// ``CourierError/Code/reconnectLimit``. Any delivered event resets the count, and so does a connection the
    /// server kept open for at least ``maxDelay``, one the idle timeout cut (a quiet stream), and one that brought
    /// a byte (a heartbeat comment) and lived at least a second and as long as the pause before it (or
    /// ``defaultDelay``, when that pause was longer). The pause doubles after each
    /// such reconnect (from at least 100 ms, up to ``maxDelay``), so the default budget rides out an outage of
    /// several minutes.
    public var maxReconnects: Int
    /// The pause before a reconnect until the server sets one with a `retry:` field. Default: 3 seconds, as
    /// browsers.
    public var defaultDelay: Duration
    /// A random extra pause of up to this fraction of the delay (0.2: up to 20 % more; when that would pass
    /// ``maxDelay``, ``maxDelay`` less up to 20 % of it, at most half), so that clients that lost the same server do
    /// not all come back at the same instant.
    public var jitter: Double
    /// The longest pause, whatever the server's `retry:` asks.
    public var maxDelay: Duration

    /// Creates a policy.
    public init(
        maxReconnects: Int = 10, defaultDelay: Duration = .seconds(3), jitter: Double = 0.2,
        maxDelay: Duration = .seconds(60)
    ) {
        self.maxReconnects = max(0, maxReconnects)
        self.defaultDelay = max(.zero, defaultDelay)
        self.jitter = max(0, jitter)
        self.maxDelay = max(.zero, maxDelay)
    }

    /// 10 reconnects in a row, the first 3 seconds after a drop (or the server's `retry:`), each failed one doubling
    /// the pause, with 20 % jitter, at most a minute apart.
    public static let `default` = ReconnectPolicy()
    /// Never reconnects: a dropped stream ends the sequence with its error, and a stream the server ends ends it
    /// normally.
    public static let disabled = ReconnectPolicy(maxReconnects: 0)

    /// The pause before reconnect number `attempt` in a row without an event, given the server's `retry:` (if
    /// any): the server's (or the default) delay for the first; then, the previous attempt having failed, twice as
    /// long each time from at least 100 ms, up to ``maxDelay`` (the exponential backoff the HTML standard suggests
    /// "to avoid overloading a potentially already overloaded server"). So a server that asked for `retry: 0` and
    /// is down for a few seconds does not spend the whole ``maxReconnects`` budget in a burst.
    func delay(server: Duration?, attempt: Int = 1) -> Duration {
        var base = min(server ?? defaultDelay, maxDelay)
        if attempt > 1 {
            let factor = 1 << min(attempt - 1, 30)
            let floor = max(base, .milliseconds(100))
            base = floor > maxDelay / factor ? maxDelay : floor * factor  // no overflow, whatever maxDelay is
        }
        guard jitter > 0, base > .zero else { return base }
        let extra = base * Double.random(in: 0...jitter)
        if base + extra <= maxDelay { return base + extra }
        // Past the cap, the jitter is taken off it rather than added (at most half of it): clients that all hit
        // `maxDelay` (a server's `retry:` past it, a long outage) would otherwise come back at the same instant.
        return maxDelay - maxDelay * Double.random(in: 0...min(jitter, 0.5))
    }
}

extension Client {
    /// The Server-Sent Events of `request`, reconnecting as a browser's `EventSource` does, and more carefully.
    ///
    /// Each connection is a full call through the pipeline (adapters run again, so a refreshed token is used;
    /// decisions judge the head: a 401 refreshes and replays, a refused status ends the sequence with its error).
    /// Then:
    /// - **A dropped stream** (the connection broke, or the body ended) reconnects after the server's `retry:`
    ///   (else ``ReconnectPolicy/defaultDelay``, with jitter), sending `Last-Event-ID` with the last event ID seen.
    /// - **`204 No Content`** ends the sequence normally: the server says there is nothing more.
    /// - **A response that is not `200` with `text/event-stream`** (a `202`, a `206`, a JSON body) ends it with
    ///   ``CourierError/Code/unexpectedResponse``, without reconnecting (the HTML standard's "fail the connection").
    /// - **``cancelAll()``** (and ``cancelAll(tagged:)`` with one of `tags`) ends it with `CancellationError`, at
    ///   once, while it connects, reads or waits to reconnect; so does cancelling the task that iterates it.
    /// - **Limits** (``StreamLimits``) end it with ``CourierError/Code/eventTooLarge`` or
    ///   ``CourierError/Code/lineTooLarge``, and the request's ``Request/maxResponseBodySize`` with
    ///   ``CourierError/Code/bodyTooLarge``; they are not a reason to reconnect.
    /// - **The budget**: after ``ReconnectPolicy/maxReconnects`` reconnects in a row without an event, the sequence
    ///   ends with ``CourierError/Code/reconnectLimit``, whose underlying error is the last failure.
    /// - **No duplicates**: after a reconnect, the events a server sends again (it resumed a little early) are
    ///   skipped until the first new one: an event under an ID already delivered whose type and data are those of
    ///   the event delivered in the same place under that ID. Events after the resumed ID that carry no `id` field
    ///   are new, and so are events under a reused ID with other data (a server whose counter restarted).
    ///
    /// Every connection is its own call, with its own log line and events; a reconnect is logged at `info` with its
    /// reason.
    ///
    /// ```swift
    /// struct Notifications: Request {
    ///     typealias Response = LiveResponse
    ///     var path: String { "/notifications" }
    /// }
    /// for try await event in client.events(Notifications()) {
    ///     print(event.type, event.data)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - request: The stream's request.
    ///   - lastEventID: An ID to resume after on the first connection (one saved from an earlier session).
    ///   - limits: The largest line and event.
    ///   - reconnect: When and how often to reconnect.
    ///   - tags: Labels for ``cancelAll(tagged:)``, which ends the sequence with `CancellationError` (as
    ///     ``cancelAll()`` does) whether it is connecting, reading or waiting to reconnect.
    public func events<R: Request>(
        _ request: R, lastEventID: String? = nil, limits: StreamLimits = .standard,
        reconnect: ReconnectPolicy = .default, tags: Set<RequestTag> = []
    ) -> EventSource<R> where R.Response == LiveResponse {
        EventSource(
            client: self, request: request, lastEventID: lastEventID, limits: limits, policy: reconnect, tags: tags)
    }
}

/// The events of a Server-Sent Events stream across reconnects: see ``Client/events(_:lastEventID:limits:reconnect:tags:)``.
public struct EventSource<R: Request>: AsyncSequence, Sendable where R.Response == LiveResponse {
    /// An event.
    public typealias Element = ServerSentEvent
    /// A ``CourierError`` or `CancellationError`.
    public typealias Failure = any Error

    let client: Client
    let request: R
    let lastEventID: String?
    let limits: StreamLimits
    let policy: ReconnectPolicy
    let tags: Set<RequestTag>

    /// Connects and starts reading events.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(source: self)
    }

    /// Reads the events of an ``EventSource``, reconnecting as needed.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private let source: EventSource
        private var parser: EventStreamParser
        private var body: StreamBodyReader?
        /// The stream in the client's registry, from the first event asked for to the end: ``Client/cancelAll()``
        /// marks it, and cancels the step running in its ``RequestRegistry/Registration/run(_:)``.
        private var registration: RequestRegistry.Registration?
        /// Events parsed and not handed out yet, each with whether its ID was set on this connection.
        private var pending: [(event: ServerSentEvent, idFromThisStream: Bool)] = []
        private var pendingIndex = 0
        /// A limit the last chunk broke, thrown once the events completed before it are handed out.
        private var pendingError: (any Error)?
        private var isFinished = false
        /// Reconnects in a row without a delivered event (a connection kept open past the policy's longest pause
        /// resets it too).
        private var failedReconnects = 0
        /// When the current connection was accepted as an event stream.
        private var acceptedAt: ContinuousClock.Instant?
        /// Whether the current connection brought any byte (an event, a comment, a heartbeat).
        private var heardOnConnection = false
        /// The pause before the current connection (zero before the first).
        private var lastPause = Duration.zero
        /// Connections made so far (counted by the stream's log line, which reports them).
        public var connections: Int { logLine?.connections ?? 0 }
        /// The IDs delivered, newest last (bounded), each with a fingerprint of every event delivered under it (its
        /// own and those after it without an `id` field; the first 1,024), to skip replays after a reconnect.
        private var deliveredIDs: [(id: String, fingerprints: [Int])] = []
        /// How many events of the current connection came under each ID set on it.
        private var seenOnConnection: [String: Int] = [:]
        /// Whether the current connection may still replay delivered events.
        private var skippingReplays = false
        /// The stream's identity and counts for the client's monitors (`nil` without monitors).
        private let record: StreamRecord?
        /// The stream's one log line, from the first event asked for: written at the end, or when the reader lets go
        /// of the iterator before it.
        private var logLine: StreamLogLine?

        init(source: EventSource) {
            self.source = source
            self.parser = EventStreamParser(limits: source.limits, lastEventID: source.lastEventID)
            self.record = StreamRecord(request: source.request, client: source.client)
        }

        /// The next event; `nil` when the server ended the stream with `204`.
        public mutating func next() async throws -> ServerSentEvent? {
            do {
                let event = try await nextEvent()
                if event != nil {
                    logLine?.delivered += 1
                    record?.delivered()
                } else {
                    ended(error: nil)
                }
                return event
            } catch {
                ended(error: error)
                throw error
            }
        }

        /// What tells a replayed event from a new one under the same ID: its type and data (hashed with the
        /// process's seed; only compared within this process).
        private static func fingerprint(of event: ServerSentEvent) -> Int {
            var hasher = Hasher()
            hasher.combine(event.type)
            hasher.combine(event.data)
            return hasher.finalize()
        }

        /// Reports the stream's end to the monitors and in its log line, once.
        private mutating func ended(error: (any Error)?) {
            record?.end(error: error)
            logLine?.write(error: error)
            registration = nil
        }

        /// Runs one step of the stream (a connection, a read, a pause) where ``Client/cancelAll()`` can cancel it.
        private func step<Value: Sendable>(_ operation: @Sendable () async throws -> Value) async throws -> Value {
            guard let registration else { return try await operation() }
            return try await registration.run(operation)
        }

        /// Throws `CancellationError`, and ends the sequence, when ``Client/cancelAll()`` cancelled it.
        private mutating func checkCancelled() throws {
            if registration?.isCancelled == true {
                isFinished = true
                body = nil
                throw CancellationError()
            }
        }

        private mutating func nextEvent() async throws -> ServerSentEvent? {
            if logLine == nil {
                logLine = StreamLogLine(client: source.client, requestName: source.request.requestName)
                registration = source.client.registry.register(tags: source.tags)
            }
            while !isFinished {
                try checkCancelled()
                if pendingIndex < pending.count {
                    let (event, idFromThisStream) = pending[pendingIndex]
                    pendingIndex += 1
                    // Only events under an ID are compared with what was delivered, and recorded.
                    let fingerprint = event.id == nil ? 0 : Self.fingerprint(of: event)
                    if skippingReplays, idFromThisStream, let id = event.id {
                        // A replay names IDs again: the server resumed before the Last-Event-ID it was sent. Skip an
                        // event under an ID when the event delivered in the same place under it was this one (type
                        // and data): a server that reuses IDs for new events (its counter restarted) loses none. An
                        // event whose ID is the one the reconnect sent (no `id` field on this connection yet) is new:
                        // the server resumed after it.
                        let seen = seenOnConnection[id, default: 0] + 1
                        seenOnConnection[id] = seen
                        if let delivered = deliveredIDs.last(where: { $0.id == id }),
                            seen <= delivered.fingerprints.count,
                            delivered.fingerprints[seen - 1] == fingerprint
                        {
                            continue
                        }
                    }
                    skippingReplays = false
                    failedReconnects = 0
                    if let id = event.id {
                        if deliveredIDs.last?.id == id {
                            if deliveredIDs[deliveredIDs.count - 1].fingerprints.count < 1_024 {
                                deliveredIDs[deliveredIDs.count - 1].fingerprints.append(fingerprint)
                            }
                        } else {
                            deliveredIDs.append((id, [fingerprint]))
                            if deliveredIDs.count > 256 { deliveredIDs.removeFirst(deliveredIDs.count - 256) }
                        }
                    }
                    return event
                }
                if body == nil {
                    guard try await connect() else { return nil }
                    continue
                }
                do {
                    if let error = pendingError {
                        pendingError = nil
                        throw error
                    }
                    if let body, let chunk = try await step({ try await body.next() }) {
                        heardOnConnection = true
                        var parsed: [(event: ServerSentEvent, idFromThisStream: Bool)] = []
                        do {
                            try parser.parse(chunk, markingIDs: { parsed.append(($0, $1)) })
                        } catch {
                            pendingError = error  // after the events before it, as the parser's own contract says
                        }
                        pending = parsed
                        pendingIndex = 0
                    } else {
                        try await drop(reason: "the server ended the stream", error: nil)
                    }
                } catch let error as CourierError
                    where [.eventTooLarge, .lineTooLarge, .bodyTooLarge, .decompressionLimit].contains(error.code)
                {
                    // A limit is not a reason to reconnect: the next connection would break it again (the request's
                    // own maxResponseBodySize included, which would otherwise cut the stream and reconnect forever;
                    // a compressed stream past the transport's decompression limit, replayed from its start).
                    body = nil
                    isFinished = true
                    throw error
                } catch is CancellationError {
                    isFinished = true
                    throw CancellationError()
                } catch  where registration?.isCancelled == true {
                    // Cancelled by the client while reading: whatever the transport made of it, not a dropped stream.
                    try checkCancelled()
                } catch let error as CourierError where error.code == .reconnectLimit {
                    isFinished = true
                    throw error
                } catch {
                    try await drop(reason: "the stream broke", error: error)
                }
            }
            return nil
        }

        /// Opens a connection; `false` when the server said there is nothing more (`204`).
        private mutating func connect() async throws -> Bool {
            let request = ResumingRequest(base: source.request, lastEventID: parser.lastEventID, stream: record?.id)
            let live: LiveResponse
            do {
                logLine?.connections += 1
                record?.connected()
                // Not `client.send`, which would register the connection a second time: the stream's registration
                // stands for it.
                let client = source.client
                let open: @Sendable () async throws -> LiveResponse = {
                    try await Pipeline(client: client, request: request).run()
                }
                live = try await step(open)
            } catch  where registration?.isCancelled == true {
                try checkCancelled()
                throw CancellationError()
            } catch let error as CourierError where Self.isReconnectable(error) {
                try await drop(reason: "connecting failed", error: error)
                return true
            } catch {
                isFinished = true
                throw error
            }
            if live.status.code == 204 {
                isFinished = true
                return false
            }
            let type = live.headerFields[.contentType]?.split(separator: ";").first?.trimmingCharacters(
                in: .whitespaces)
            // HTML's EventSource: a status other than 200, or another type, fails the connection for good. Another
            // 2xx (202, 206 …) is not a stream to resume: reconnecting when it ends would loop until the budget.
            let problem =
                live.status.code != 200
                ? "the response's status is \(live.status.code), not 200"
                : type?.lowercased() != "text/event-stream"
                    ? "the response is \(type ?? "without a Content-Type"), not text/event-stream" : nil
            if let problem {
                isFinished = true
                // The connection's call fails with the error the caller gets (its monitors and log line say so), which
                // the call's record redacts and gives its trace.
                throw live.end(
                    with: CourierError(code: .unexpectedResponse, stage: .parse, message: problem, response: live.head))
            }
            body = StreamBodyReader(live.makeAsyncIterator())
            acceptedAt = .now
            heardOnConnection = false
            skippingReplays = connections > 1
            seenOnConnection = [:]
            return true
        }

        /// Ends the current connection and waits before the next, or gives up when the budget is spent.
        private mutating func drop(reason: String, error: (any Error)?) async throws {
            // A connection that was a stream, though it brought no event, was not a failed attempt, and reconnects with
            // a fresh budget: one the server kept open for longer than the longest pause between reconnects, one that
            // brought any byte and lived at least a second and as long as the pause before it (up to the default
            // delay: after an outage the pause is near `maxDelay`, longer than a healthy connection's life), such as a
            // heartbeat comment before a server's connection lifetime cut it (Tomcat's 30 s); one the idle timeout cut (the server
            // kept it open and quiet). As a browser's EventSource, it reconnects for as long as the server answers.
            // One the server accepts and closes at once, silent or after a greeting (`: connected`, then its backend
            // failed), still counts, so such a server is not hammered: with `retry: 0`, in a loop without a pause.
            if let acceptedAt {
                let lived = ContinuousClock.now - acceptedAt
                if (error as? CourierError)?.code == .idleTimeout || lived >= source.policy.maxDelay
                    || (heardOnConnection
                        && lived >= Swift.max(.seconds(1), Swift.min(lastPause, source.policy.defaultDelay)))
                {
                    failedReconnects = 0
                }
            }
            acceptedAt = nil
            body = nil
            parser.finish()
            pending = []
            pendingError = nil
            pendingIndex = 0
            if source.policy.maxReconnects == 0 {
                // Reconnecting is off: the stream's end is the sequence's end, and its failure the sequence's.
                isFinished = true
                if let error { throw error }
                return
            }
            guard failedReconnects < source.policy.maxReconnects else {
                isFinished = true
                throw CourierError(
                    code: .reconnectLimit, stage: .transport,
                    message: "\(reason); gave up after \(failedReconnects) reconnects in a row without an event",
                    underlyingError: error)
            }
            failedReconnects += 1
            let delay = source.policy.delay(server: parser.reconnectionTime, attempt: failedReconnects)
            lastPause = delay
            record?.emit(.reconnecting(number: failedReconnects, delay: delay, reason: reason))
            source.client.configuration.logger.info(
                "event stream reconnecting",
                metadata: [
                    "courier.reason": "\(reason)", "courier.reconnect": "\(failedReconnects)",
                    "courier.delay": "\(delay)",
                    "courier.error": "\(error.map { "\($0)" } ?? "-")",
                ])
            do {
                try await step { try await Task.sleep(for: delay) }
            } catch {
                isFinished = true  // cancelled while waiting: no reconnect after it
                throw error
            }
        }

        /// Failures worth reconnecting after: the network, not the server's refusal.
        private static func isReconnectable(_ error: CourierError) -> Bool {
            switch error.code {
            case .connectionRefused, .connectionReset, .connectionFailed, .connectTimeout, .networkUnreachable,
                .hostNotFound, .notConnectedToInternet, .timedOut, .idleTimeout, .truncatedResponse, .transportFailed:
                true
            default: false
            }
        }
    }
}

/// The body of an event stream's connection, read in a child task of the registration (so that
/// ``Client/cancelAll()`` can stop the read without cancelling the caller's task).
///
/// `@unchecked Sendable` is sound: one ``EventSource/AsyncIterator`` owns it, and only its `next()` reads it, which
/// awaits each read (in the child task) before the next; the iterator is used from one task at a time. So no two
/// tasks ever touch `iterator` at once, and each read happens-after the previous (the child's end is awaited).
private final class StreamBodyReader: @unchecked Sendable {
    private var iterator: LiveResponse.AsyncIterator

    init(_ iterator: LiveResponse.AsyncIterator) { self.iterator = iterator }

    func next() async throws -> ArraySlice<UInt8>? { try await iterator.next() }
}

/// An event stream's identity for monitors: its ID (the ``CourierEvent/stream`` of its connections), and its
/// ``CourierEvent/Kind/reconnecting(number:delay:reason:)`` and ``CourierEvent/Kind/streamEnded(connections:events:error:)``
/// events. The end is reported once: when the sequence ends or fails, or when the consumer drops the iterator.
final class StreamRecord: Sendable {
    private struct State {
        var events = 0
        var connections = 0
        var isEnded = false
    }

    let id: CourierEvent.CallID
    private let dispatcher: EventDispatcher
    private let requestName: String
    private let method: HTTPRequest.Method
    private let environment: Server.Environment
    private let start = ContinuousClock.now
    private let state = LockedBox(State())

    /// `nil` when the client has no monitors.
    init?<R: Request>(request: R, client: Client) {
        guard let dispatcher = client.configuration.dispatcher else { return nil }
        self.dispatcher = dispatcher
        self.id = CallEvents.newCallID()
        self.requestName = request.requestName
        self.method = request.method
        self.environment = request.server?.environment ?? request.environment ?? client.environment
    }

    func delivered() {
        state.withLock { $0.events += 1 }
    }

    func emit(_ kind: CourierEvent.Kind) {
        let now = ContinuousClock.now
        dispatcher.dispatch(
            CourierEvent(
                callID: id, requestName: requestName, method: method, environment: environment, attempt: 0,
                instant: now, elapsed: now - start, stream: id, kind: kind))
    }

    /// Reports the end, once.
    func end(error: (any Error)?) {
        let counts: (events: Int, connections: Int)? = state.withLock { state in
            guard !state.isEnded else { return nil }
            state.isEnded = true
            return (state.events, state.connections)
        }
        guard let counts else { return }
        emit(.streamEnded(connections: counts.connections, events: counts.events, error: error))
    }

    func connected() {
        state.withLock { $0.connections += 1 }
    }

    deinit {
        let ended: (events: Int, connections: Int)? = state.withLock { state in
            state.isEnded ? nil : (state.events, state.connections)
        }
        if let ended { emit(.streamEnded(connections: ended.connections, events: ended.events, error: nil)) }
    }
}

/// `base` with `Last-Event-ID` (when resuming), `Accept: text/event-stream` and `Cache-Control: no-cache`, and
/// never served from a cache.
struct ResumingRequest<Base: Request>: ForwardingRequest, StreamConnection where Base.Response == LiveResponse {
    typealias Response = LiveResponse
    let base: Base
    let lastEventID: String?
    let stream: CourierEvent.CallID?

    var cachePolicy: CachePolicy { .bypass }
    /// The base's adapters (its headers among them), then the stream's own fields.
    var adapters: [any RequestAdapter] { base.adapters + [EventStreamAdapter(lastEventID: lastEventID)] }
    var parser: any ResponseParser<LiveResponse> { base.parser }
}

/// Sets an event stream request's fields: `Accept: text/event-stream` unless the request chose one,
/// `Cache-Control: no-cache`, and `Last-Event-ID` when resuming.
struct EventStreamAdapter: RequestAdapter {
    let lastEventID: String?

    var name: String { "eventStream" }

    func adapt(_ request: OutgoingRequest, context: AdapterContext) async throws -> OutgoingRequest {
        var request = request
        if request.head.headerFields[.accept] == nil {
            request.head.headerFields[.accept] = "text/event-stream"
        }
        request.head.headerFields[.cacheControl] = "no-cache"
        if let lastEventID, !lastEventID.isEmpty, let name = HTTPField.Name("Last-Event-ID") {
            // An ID never holds NUL, LF or CR (the parser drops or splits on them). One with another control
            // character cannot be a field value (RFC 9110 §5.5): the stream resumes without it, as from its start,
            // rather than ending because of an ID the server chose.
            if let value = try? HeaderValidation.validatedValue(lastEventID, for: "Last-Event-ID") {
                request.head.headerFields[name] = value
            } else {
                context.logger.warning(
                    "event stream: the last event ID has a control character and cannot be sent; reconnecting without it"
                )
            }
        }
        return request
    }
}

/// An event stream's one log line (at the client's `callLogLevel`, or `failureLogLevel` when it failed), written
/// once: when the stream ends or fails, or, when its reader stops before (a `break` out of the loop, a dropped
/// iterator), as the reader lets it go.
///
/// Not `Sendable`: one iterator owns it, and iterators are used from one task at a time.
final class StreamLogLine {
    private let client: Client
    private let requestName: String
    private let start = ContinuousClock.now
    /// Events handed out so far.
    var delivered = 0
    /// Connections made so far.
    var connections = 0
    private var isWritten = false

    init(client: Client, requestName: String) {
        self.client = client
        self.requestName = requestName
    }

    /// Writes the line, unless it was written already.
    func write(error: (any Error)?, stoppedByReader: Bool = false) {
        guard !isWritten else { return }
        isWritten = true
        let configuration = client.configuration
        let duration = ContinuousClock.now - start
        let outcome = error.map { " failed: \($0)" } ?? (stoppedByReader ? ", stopped by its reader" : "")
        let line =
            "event stream \(requestName) ended: \(delivered) events, \(connections) connections, "
            + "\(RequestLogLine.format(duration))" + outcome
        configuration.logger.log(
            level: error == nil ? configuration.callLogLevel : configuration.failureLogLevel, "\(line.oneLine)",
            metadata: [
                "courier.events": "\(delivered)", "courier.connections": "\(connections)",
                "courier.duration_ms": "\(duration.wholeMilliseconds)",
            ])
    }

    deinit {
        write(error: nil, stoppedByReader: true)
    }
}
