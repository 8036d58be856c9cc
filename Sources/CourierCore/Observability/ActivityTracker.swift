/// Counts a client's calls in flight: the network-activity indicator, on any platform.
///
/// Give one tracker to every client whose calls should count (``Client/Configuration/activity``). A call counts
/// from the moment ``Client/send(_:)`` starts until it returns or throws, cancellation included, retries and
/// restarts counting once. Unlike an ``EventMonitor``, the tracker is updated on the request path (two lock
/// operations per call), so its value is exact.
///
/// ```swift
/// let activity = ActivityTracker()
/// let client = Client(server: server, transport: transport, configuration: .init(activity: activity))
/// Task { for await count in activity.updates { spinner.isHidden = count == 0 } }
/// ```
public final class ActivityTracker: Sendable {
    private struct State {
        var inFlight = 0
        var nextObserver = 0
        var observers: [Int: AsyncStream<Int>.Continuation] = [:]
    }

    private let state = LockedBox(State())

    /// Creates a tracker with no calls in flight.
    public init() {}

    /// The number of calls in flight now.
    public var inFlight: Int { state.withLock { $0.inFlight } }

    /// Whether any call is in flight.
    public var isActive: Bool { inFlight > 0 }

    /// The number of calls in flight: the current value first, then each change.
    ///
    /// A slow reader sees the latest value rather than every step (the stream keeps only the newest). Each access
    /// returns a new stream; it ends when its reader stops iterating.
    public var updates: AsyncStream<Int> {
        let (stream, continuation) = AsyncStream<Int>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            let id = state.nextObserver
            state.nextObserver += 1
            state.observers[id] = continuation
            continuation.yield(state.inFlight)
            return id
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.observers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Counts a call that begins.
    func begin() { change(by: 1) }

    /// Counts a call that ended.
    func end() { change(by: -1) }

    private func change(by delta: Int) {
        state.withLock { state in
            state.inFlight += delta
            for continuation in state.observers.values { continuation.yield(state.inFlight) }
        }
    }
}
