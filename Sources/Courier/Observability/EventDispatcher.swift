import HTTPTypes

/// Hands events to monitors without waiting for them: one bounded stream and one draining task per monitor.
///
/// A configuration shares one dispatcher among its copies; when the last copy goes, the streams finish and the
/// tasks end after delivering what is buffered.
final class EventDispatcher: Sendable {
    private let continuations: [AsyncStream<CourierEvent>.Continuation]
    private let dropped = LockedBox(0)

    /// `nil` when there are no monitors, so a client without monitors builds no events at all.
    init?(monitors: [any EventMonitor], capacity: Int) {
        guard !monitors.isEmpty else { return nil }
        continuations = monitors.map { monitor in
            let (stream, continuation) = AsyncStream<CourierEvent>.makeStream(
                bufferingPolicy: .bufferingOldest(max(1, capacity)))
            Task.detached(priority: .utility) {
                for await event in stream {
                    await monitor.handle(event)
                }
            }
            return continuation
        }
    }

    deinit {
        for continuation in continuations { continuation.finish() }
    }

    /// Offers `event` to every monitor; a monitor whose buffer is full misses it.
    func dispatch(_ event: CourierEvent) {
        for continuation in continuations {
            if case .dropped = continuation.yield(event) {
                dropped.withLock { $0 += 1 }
            }
        }
    }

    /// Events dropped so far because a monitor's buffer was full.
    var droppedCount: Int { dropped.withLock { $0 } }
}

/// The events of one call: stamps each with the call's identity and time, and dispatches it.
struct CallEvents: Sendable {
    private static let nextID = LockedBox<UInt64>(0)

    let dispatcher: EventDispatcher
    let callID: CourierEvent.CallID
    let requestName: String
    let method: HTTPRequest.Method
    let environment: Environment
    let start: ContinuousClock.Instant
    let redactor: Redactor

    /// The events of a new call of `request` on `client`, or `nil` when the client has no monitors.
    init?<R: Request>(request: R, client: Client, start: ContinuousClock.Instant) {
        guard let dispatcher = client.configuration.dispatcher else { return nil }
        self.dispatcher = dispatcher
        self.callID = CourierEvent.CallID(
            rawValue: Self.nextID.withLock {
                $0 += 1
                return $0
            })
        self.requestName = String(describing: R.self)
        self.method = request.method
        self.environment = request.server?.environment ?? request.environment ?? client.environment
        self.start = start
        self.redactor = client.configuration.redactor
    }

    func emit(_ kind: CourierEvent.Kind, attempt: Int) {
        let now = ContinuousClock.now
        dispatcher.dispatch(
            CourierEvent(
                callID: callID,
                requestName: requestName,
                method: method,
                environment: environment,
                attempt: attempt,
                instant: now,
                elapsed: now - start,
                kind: kind
            )
        )
    }

    func adapted(_ head: HTTPRequest, attempt: Int) {
        emit(.adapted(redactor.redact(head)), attempt: attempt)
    }

    func responseHead(_ head: HTTPResponse, attempt: Int) {
        var head = head
        head.headerFields = redactor.redact(head.headerFields)
        emit(.responseHead(head), attempt: attempt)
    }
}
