import HTTPTypes

/// Hands events to monitors without waiting for them: one buffer and one draining task per monitor.
///
/// A buffer holds at most `capacity` events; past that, events are dropped (and counted), except a call's last one
/// (finished or failed), which gets in while the buffer holds fewer than twice `capacity`: a monitor that falls
/// behind misses the middle of calls before their ends, so counts and spans stay complete through a burst. Past
/// twice `capacity` (a monitor stuck, or slower than the calls for good) ends are dropped and counted too, so memory
/// stays bounded by twice the capacity whatever the monitor does.
///
/// A configuration shares one dispatcher among its copies; when the last copy goes, the streams finish and the
/// tasks end after delivering what is buffered.
final class EventDispatcher: Sendable {
    private struct Outlet {
        let continuation: AsyncStream<CourierEvent>.Continuation
        let state: LockedBox<OutletState>
    }

    private struct OutletState {
        /// Events yielded and not yet taken by the monitor's task.
        var pending = 0
        /// Calls that ended at their deadline while their attempts still run (`Pipeline.withDeadline`): until those
        /// attempts end, their events but the call's end are dropped, so that a monitor sees nothing of a call after
        /// its `failed`. Checked and yielded under the same lock as `pending`: no lock of its own per event.
        var abandoned: Set<CourierEvent.CallID> = []
    }

    private let outlets: [Outlet]
    private let monitors: [any EventMonitor]
    private let capacity: Int
    private let dropped = LockedBox(0)

    /// `nil` when there are no monitors, so a client without monitors builds no events at all.
    init?(monitors: [any EventMonitor], capacity: Int) {
        guard !monitors.isEmpty else { return nil }
        self.capacity = max(1, capacity)
        self.monitors = monitors
        outlets = monitors.map { monitor in
            let (stream, continuation) = AsyncStream<CourierEvent>.makeStream()
            let state = LockedBox(OutletState())
            Task.detached {
                for await event in stream {
                    state.withLock { $0.pending -= 1 }
                    await monitor.handle(event)
                }
            }
            return Outlet(continuation: continuation, state: state)
        }
    }

    deinit {
        for outlet in outlets { outlet.continuation.finish() }
    }

    /// Tells every monitor, on the caller's task, that a call starts (``EventMonitor/callWillStart(_:)``), then
    /// dispatches its `started` event.
    func start(_ event: CourierEvent) {
        for monitor in monitors { monitor.callWillStart(event) }
        dispatch(event)
    }

    /// Offers `event` to every monitor; a monitor whose buffer is full misses it, unless it ends a call. An event of
    /// an abandoned call (``abandon(_:)``) other than its end is dropped, uncounted.
    ///
    /// Yielded under the outlet's lock (a yield to an unbounded stream does not wait), so that once ``abandon(_:)``
    /// has returned no event of that call is yielded, even one offered just before.
    func dispatch(_ event: CourierEvent) {
        let isLast = event.kind.endsCall
        for outlet in outlets {
            let admitted = outlet.state.withLock { state in
                if !isLast, !state.abandoned.isEmpty, state.abandoned.contains(event.callID) { return true }
                guard state.pending < capacity || (isLast && state.pending < 2 * capacity) else { return false }
                state.pending += 1
                outlet.continuation.yield(event)
                return true
            }
            if !admitted { dropped.withLock { $0 += 1 } }
        }
    }

    /// Drops the events of the call `id` but its end, until ``release(_:)``: it ended at its deadline while its
    /// attempts still run.
    func abandon(_ id: CourierEvent.CallID) {
        for outlet in outlets { outlet.state.withLock { _ = $0.abandoned.insert(id) } }
    }

    /// Lets the events of the call `id` through again: its abandoned attempts ended.
    func release(_ id: CourierEvent.CallID) {
        for outlet in outlets { outlet.state.withLock { _ = $0.abandoned.remove(id) } }
    }

    /// Events dropped so far because a monitor's buffer was full.
    var droppedCount: Int { dropped.withLock { $0 } }
}

extension CourierEvent.Kind {
    /// Whether this is a call's (or a stream's) last event.
    var endsCall: Bool {
        switch self {
        case .finished, .failed, .streamEnded: true
        default: false
        }
    }
}

/// The events of one call: stamps each with the call's identity and time, and dispatches it.
///
/// A class (one allocation, only for a call on a client with monitors): the call record, the pipeline and the
/// contexts each hold one, and a copy of an optional struct of this size went through its value witnesses even when
/// it was `nil` (about 1,000 instructions per call without monitors in issue #17's profile).
final class CallEvents: Sendable {
    private static let nextID = LockedBox<UInt64>(0)

    /// A new call ID, unique in the process (calls and event streams share the numbering).
    static func newCallID() -> CourierEvent.CallID {
        CourierEvent.CallID(
            rawValue: nextID.withLock {
                $0 += 1
                return $0
            })
    }

    let dispatcher: EventDispatcher
    let callID: CourierEvent.CallID
    /// The event stream this call is a connection of.
    let stream: CourierEvent.CallID?
    let requestName: String
    let method: HTTPRequest.Method
    let environment: Server.Environment
    /// When the call started (a `Moment`, not a `ContinuousClock.Instant`: see `Moment`).
    let start: Moment
    let redactor: Redactor

    /// The events of a new call of `request` on `client`, or `nil` when the client has no monitors.
    ///
    /// A function rather than a failable initializer: a class's initializer allocates the object before its body
    /// runs, so returning `nil` from one still cost every call without monitors a `malloc` and a `free`.
    static func make<R: Request>(request: R, client: Client) -> CallEvents? {
        guard let dispatcher = client.configuration.dispatcher else { return nil }
        return CallEvents(request: request, client: client, dispatcher: dispatcher)
    }

    private init<R: Request>(request: R, client: Client, dispatcher: EventDispatcher) {
        self.dispatcher = dispatcher
        self.callID = Self.newCallID()
        self.stream = (request as? any StreamConnection)?.stream
        self.requestName = request.requestName
        self.method = request.method
        self.environment = request.server?.environment ?? request.environment ?? client.environment
        self.start = .now
        self.redactor = client.configuration.redactor
    }

    func emit(_ kind: CourierEvent.Kind, attempt: Int) {
        dispatcher.dispatch(event(kind, attempt: attempt))
    }

    /// The call's `started` event, with ``EventMonitor/callWillStart(_:)`` on the caller's task first.
    func emitStarted() {
        dispatcher.start(event(.started, attempt: 0))
    }

    private func event(_ kind: CourierEvent.Kind, attempt: Int) -> CourierEvent {
        let now = Moment.now
        return CourierEvent(
            callID: callID,
            requestName: requestName,
            method: method,
            environment: environment,
            attempt: attempt,
            instant: now.instant,
            elapsed: now - start,
            stream: stream,
            kind: kind
        )
    }

    /// From now on, drops this call's events but its end: it ended at its deadline while its attempts still run
    /// (`Pipeline.withDeadline`). Once this returns, no event of those attempts reaches a monitor.
    func abandon() { dispatcher.abandon(callID) }

    /// Forgets ``abandon()``: the abandoned attempts ended.
    func release() { dispatcher.release(callID) }

    func adapted(_ head: HTTPRequest, attempt: Int) {
        emit(.adapted(redactor.redact(head)), attempt: attempt)
    }

    func responseHead(_ head: HTTPResponse, attempt: Int) {
        var head = head
        head.headerFields = redactor.redact(head.headerFields)
        emit(.responseHead(head), attempt: attempt)
    }
}
