import CourierCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One `URLSession` with its own delegate, delegate queue and control queue.
///
/// On Linux a lane serves one request at a time, so its delegate queue's backpressure (see ``DeliveryQueue``) and
/// its serial control queue belong to that request alone, and a cancelled request's late callbacks can never reach
/// another request. Lanes are reused one request after another (see ``LanePool``), so sequential requests keep
/// libcurl's pooled connection. On Apple platforms one lane serves every request: `URLSessionTask.suspend()` pauses a
/// download there without blocking anything.
final class SessionLane: Sendable {
    let session: URLSession
    let delegate: SessionDelegate
    /// Where URLSession's task methods run: they wait for FoundationNetworking's work queue, which may be held back,
    /// and must never block a thread of Swift's cooperative pool (a serial queue gets a thread of its own).
    let control: DispatchQueue
    #if canImport(FoundationNetworking)
        let deliveryQueue: DeliveryQueue
    #endif
    /// Whether the session was invalidated: set on the control queue, before `finishTasksAndInvalidate()`.
    private let isInvalidated = LockedBox(false)

    init(configuration: URLSessionConfiguration) {
        let delegate = SessionDelegate()
        self.delegate = delegate
        self.control = DispatchQueue(label: "Courier.URLSessionTransport.control")
        #if canImport(FoundationNetworking)
            // 64 queued callbacks of at most 16 KiB each (libcurl's default write size): about 1 MiB in flight.
            let queue = DeliveryQueue(maxPendingOperations: 64, maxStall: .seconds(1))
            self.deliveryQueue = queue
        #else
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
        #endif
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
        #if canImport(FoundationNetworking)
            queue.attach(to: session)
        #endif
    }

    /// Lets the session's tasks finish (they were cancelled or completed) and releases the session and its delegate.
    func invalidate() {
        #if canImport(FoundationNetworking)
            deliveryQueue.invalidate()
        #endif
        let session = session
        control.async { [isInvalidated] in
            isInvalidated.withLock { $0 = true }
            session.finishTasksAndInvalidate()
        }
    }

    /// The task `make` creates, or `nil` once the session is invalidated: on the control queue only.
    ///
    /// A request that checked out the lane before a `shutdown()` reaches the control queue after the invalidation
    /// there. Creating a task in an invalidated session raises an Objective-C exception on Apple platforms ("Task
    /// created in a session that has been invalidated"), which ended the app.
    func task(_ make: () -> URLSessionTask) -> URLSessionTask? {
        dispatchPrecondition(condition: .onQueue(control))
        return isInvalidated.withLock { $0 } ? nil : make()
    }
}

/// The transport's lanes: an idle one is reused (most recently used first, so its connection is still open), a new
/// one is made while fewer than `maxLanes` exist, and otherwise the request waits, first come first served, for one
/// to be checked in. At most `maxIdleLanes` idle lanes are kept, and none longer than `maxIdleTime`: each check-out
/// and check-in finds the ones that have been idle too long and invalidates them (with their connections), so a
/// burst of requests does not hold its sessions for the transport's whole life, and a request does not get a session
/// whose connection has been idle for that long.
final class LanePool: Sendable {
    private struct Waiter {
        let id: Int
        let continuation: CheckedContinuation<SessionLane, any Error>
    }

    private struct IdleLane {
        let lane: SessionLane
        let since: ContinuousClock.Instant
    }

    private struct State {
        /// Oldest first: lanes are taken from the end and put back there.
        var idle: [IdleLane] = []
        var busy: [ObjectIdentifier: SessionLane] = [:]
        var waiters: [Waiter] = []
        var nextWaiter = 0
        var isShutDown = false
    }

    private enum Grant {
        case lane(SessionLane)
        case make
        case wait
        case shutDown
    }

    private let state = LockedBox(State())
    /// The caller's configuration, copied once; each `URLSession` copies it again when created.
    private let configuration: LockedBox<URLSessionConfiguration>
    private let maxLanes: Int
    private let maxIdleLanes: Int
    private let maxIdleTime: Duration
    #if !canImport(FoundationNetworking)
        private let shared: SessionLane
    #endif

    /// - Parameter configuration: Copied, so later changes by the caller have no effect.
    init(configuration: URLSessionConfiguration, maxLanes: Int, maxIdleLanes: Int, maxIdleTime: Duration) {
        let copy = LockedBox(configuration.copy() as? URLSessionConfiguration ?? configuration)
        self.configuration = copy
        self.maxLanes = max(1, maxLanes)
        self.maxIdleLanes = min(max(0, maxIdleLanes), self.maxLanes)
        self.maxIdleTime = maxIdleTime
        #if !canImport(FoundationNetworking)
            self.shared = copy.withLock { SessionLane(configuration: $0) }
        #endif
    }

    /// A lane for one request; give it back with ``checkIn(_:)`` once the request's URLSession task has completed.
    ///
    /// A `priority` request (a token refresh: ``RequestLane/priority``) never waits: with no idle lane it gets a new
    /// one even when `maxLanes` are busy, since the requests holding them may be waiting for it.
    ///
    /// A `fresh` request gets a lane that has never carried a request, so its request goes out on a new connection
    /// (Linux: see ``URLSessionTransport/needsFreshConnection(_:)``). Idle lanes are left for others; a lane handed
    /// over after a wait is invalidated and a new one takes its place.
    ///
    /// - Throws: `CancellationError` if the task is cancelled while waiting for a lane, `CourierError.Code.timedOut`
    ///   at `deadline`, `CourierError.Code.transportFailed` once the pool was shut down.
    func checkOut(
        deadline: ContinuousClock.Instant?, priority: Bool = false, fresh: Bool = false,
        now: ContinuousClock.Instant = .now
    ) async throws -> SessionLane {
        #if canImport(FoundationNetworking)
            var expired: [SessionLane] = []
            let grant = state.withLock { state -> Grant in
                guard !state.isShutDown else { return .shutDown }
                // Idle for longer than `maxIdleTime`: closed, not reused (the longer a connection has been idle, the
                // likelier the server has closed it).
                while let oldest = state.idle.first, oldest.since.duration(to: now) > maxIdleTime {
                    expired.append(state.idle.removeFirst().lane)
                }
                if !fresh, let lane = state.idle.popLast()?.lane {
                    state.busy[ObjectIdentifier(lane)] = lane
                    return .lane(lane)
                }
                return state.busy.count < maxLanes || priority ? .make : .wait
            }
            for lane in expired { lane.invalidate() }
            switch grant {
            case .lane(let lane):
                return lane
            case .shutDown:
                throw Self.shutDownError
            case .make:
                return try admitNewLane()
            case .wait:
                let lane = try await wait(deadline: deadline)
                return fresh ? try admitNewLane(replacing: lane) : lane
            }
        #else
            guard !state.withLock({ $0.isShutDown }) else { throw Self.shutDownError }
            return shared
        #endif
    }

    /// A lane whose request's URLSession task completed: handed to the first waiter, kept, or invalidated; lanes
    /// idle for longer than `maxIdleTime` at `now` are invalidated.
    func checkIn(_ lane: SessionLane, now: ContinuousClock.Instant = .now) {
        #if canImport(FoundationNetworking)
            enum Next {
                case handOver(CheckedContinuation<SessionLane, any Error>)
                case keep
                case invalidate
            }
            var expired: [SessionLane] = []
            defer { for lane in expired { lane.invalidate() } }
            let next = state.withLock { state -> Next in
                while let oldest = state.idle.first, oldest.since.duration(to: now) > maxIdleTime {
                    expired.append(state.idle.removeFirst().lane)
                }
                guard state.busy[ObjectIdentifier(lane)] != nil, !state.isShutDown else {
                    state.busy[ObjectIdentifier(lane)] = nil
                    return .invalidate
                }
                // Not while a priority request's extra lane keeps more than `maxLanes` busy.
                if !state.waiters.isEmpty, state.busy.count <= maxLanes {
                    return .handOver(state.waiters.removeFirst().continuation)
                }
                state.busy[ObjectIdentifier(lane)] = nil
                guard state.idle.count < maxIdleLanes else { return .invalidate }
                state.idle.append(IdleLane(lane: lane, since: now))
                return .keep
            }
            switch next {
            case .handOver(let waiter): waiter.resume(returning: lane)
            case .keep: break
            case .invalidate: lane.invalidate()
            }
        #endif
    }

    /// Fails every request in flight (and every request waiting for a lane) with `error` and invalidates every
    /// lane; later ``checkOut(deadline:priority:now:)`` calls throw.
    func shutDown(failing error: any Error) {
        let (idle, busy, waiters) = state.withLock { state -> ([SessionLane], [SessionLane], [Waiter]) in
            guard !state.isShutDown else { return ([], [], []) }
            state.isShutDown = true
            defer {
                state.idle = []
                state.waiters = []
            }
            return (state.idle.map(\.lane), Array(state.busy.values), state.waiters)
        }
        for waiter in waiters { waiter.continuation.resume(throwing: error) }
        #if canImport(FoundationNetworking)
            for lane in idle { lane.invalidate() }
            // A busy lane is invalidated when its request's task completes (``checkIn(_:)``).
            for lane in busy { lane.delegate.failAll(error) }
        #else
            shared.delegate.failAll(error)
            shared.invalidate()
        #endif
    }

    /// How many lanes are idle (for tests).
    var idleCount: Int { state.withLock { $0.idle.count } }

    /// How many requests wait for a lane (for tests).
    var waitingCount: Int { state.withLock { $0.waiters.count } }

    private static let shutDownError = CourierError(
        code: .transportFailed,
        stage: .transport,
        message: "the transport was shut down"
    )

    /// Waits, first come first served, for a lane to be checked in.
    private func wait(deadline: ContinuousClock.Instant?) async throws -> SessionLane {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        let timer = deadline.map { deadline in
            Task { [weak self] in
                guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
                self?.abandon(
                    id,
                    CourierError(code: .timedOut, stage: .transport, message: "the call's deadline passed")
                )
            }
        }
        defer { timer?.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                // Checked under the lock that `abandon` takes, so a cancellation or deadline that came first is
                // never missed.
                let refusal = state.withLock { state -> (any Error)? in
                    if state.isShutDown { return Self.shutDownError }
                    if Task.isCancelled { return CancellationError() }
                    if let deadline, deadline <= .now {
                        return CourierError(code: .timedOut, stage: .transport, message: "the call's deadline passed")
                    }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let refusal { continuation.resume(throwing: refusal) }
            }
        } onCancel: {
            abandon(id, CancellationError())
        }
    }

    /// Stops waiting for a lane, if still waiting.
    private func abandon(_ id: Int, _ error: any Error) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        waiter?.continuation.resume(throwing: error)
    }

    /// A new lane, counted as busy; in place of `used` (a busy lane handed over to a `fresh` request, then
    /// invalidated) when there is one.
    ///
    /// - Throws: `CourierError.Code.transportFailed` once the pool was shut down (the new lane is invalidated).
    private func admitNewLane(replacing used: SessionLane? = nil) throws -> SessionLane {
        let lane = makeLane()
        let admitted = state.withLock { state -> Bool in
            if let used { state.busy[ObjectIdentifier(used)] = nil }
            guard !state.isShutDown else { return false }
            state.busy[ObjectIdentifier(lane)] = lane
            return true
        }
        used?.invalidate()
        guard admitted else {
            lane.invalidate()
            throw Self.shutDownError
        }
        return lane
    }

    private func makeLane() -> SessionLane {
        let lane = configuration.withLock { SessionLane(configuration: $0) }
        lane.delegate.onTaskComplete { [weak self, weak lane] in
            guard let lane else { return }
            if let self {
                self.checkIn(lane)
            } else {
                lane.invalidate()
            }
        }
        return lane
    }
}
