import CourierCore
import Dispatch

/// The timers of every request in flight on one ``URLSessionTransport``, on one dispatch timer.
///
/// Each request has a deadline, a connect timeout and an idle timeout, which almost never fire: the request ends
/// first. A sleeping `Task` per request cost a task, a thread hop to start it and another to cancel it, and left
/// a dispatch timer behind until the sleep's due time (an idle timeout of 60 s at 3,000 requests a second keeps
/// 180,000 of them in dispatch's timer heap). Here a request is an entry in a table, with the instant at which its
/// timers must next be checked. One timer is set to the earliest of them; when it fires, each due request decides
/// (``ResponseTask/nextAlarm(now:)``) whether to fail, probe the connection, or be checked again later, and the timer is
/// set to the next due instant.
///
/// Adding a request only moves the timer when it is due before the timer; removing one never moves it (a timer that
/// finds nothing due just sets itself to the next instant). So a request costs a lock and a dictionary entry, and
/// the timer fires at most every ``maxInterval`` (5 s) while requests are in flight.
final class Watchdog: Sendable {
    private struct Entry {
        weak var task: ResponseTask?
        var due: ContinuousClock.Instant
    }

    private struct State {
        /// Dispatch's timer sources are not `Sendable`: this one is only touched under the lock.
        let timer: any DispatchSourceTimer
        var entries: [ObjectIdentifier: Entry] = [:]
        /// When the timer is set to fire; `nil` when it is not set.
        var wake: ContinuousClock.Instant?
    }

    private let state: LockedBox<State>
    /// Tries a TCP connection to a host and port within a timeout (``ConnectProbe/canConnect(host:port:timeout:)``;
    /// tests give one of their own).
    private let probe: @Sendable (_ host: String, _ port: Int, _ timeout: Duration) async -> Bool

    init(
        probe: @escaping @Sendable (_ host: String, _ port: Int, _ timeout: Duration) async -> Bool =
            ConnectProbe.canConnect
    ) {
        self.probe = probe
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "Courier.URLSessionTransport.timers"))
        state = LockedBox(State(timer: timer))
        state.withLock { state in
            state.timer.setEventHandler { [weak self] in self?.fire() }
            // A dispatch source must never be released suspended: it is activated at once, and set when needed.
            state.timer.activate()
        }
    }

    deinit {
        state.withLock { $0.timer.cancel() }
    }

    /// Watches `task`: its timers are checked now, then whenever they are due, until ``remove(_:)``. Called when the
    /// request starts, and again when its timers change outside a check: a connect probe found the server reachable,
    /// or its reader caught up and its transfer is no longer held back (the idle timeout applies again).
    func watch(_ task: ResponseTask) {
        check(task, now: .now)
    }

    /// Stops watching `task` (it ended).
    func remove(_ task: ResponseTask) {
        _ = state.withLock { $0.entries.removeValue(forKey: ObjectIdentifier(task)) }
    }

    private func check(_ task: ResponseTask, now: ContinuousClock.Instant) {
        // The alarm is worked out and its instant set in one step under the lock (the task's own lock is taken
        // inside it; the task never takes this one inside its own): two checks of one task at once, the timer's and
        // a reader's `watch` after it caught up, set the instant in the order they read the task. Set separately,
        // the timer's, read while the task was held back (an hour away), could land last and leave a silent server
        // without an idle timeout for that hour.
        let alarm = state.withLock { state -> ResponseTask.Alarm? in
            let alarm = task.nextAlarm(now: now)
            switch alarm {
            case nil:
                state.entries.removeValue(forKey: ObjectIdentifier(task))
            case .sleep(let until):
                Self.schedule(task, at: until, now: now, in: &state)
            case .fire, .probe:
                break
            }
            return alarm
        }
        switch alarm {
        case nil, .sleep:
            break
        case .fire(let error):
            // `fail` removes the entry.
            task.fail(error)
        case .probe(let host, let port, let timeout, let recheck):
            // Still watched while the probe runs, for the deadline and the idle timeout: the probe's name lookup
            // has no bound of its own (`getaddrinfo` waits for a slow resolver as long as it takes), and the call's
            // deadline must not wait for it. The connect timeout waits for the probe's answer.
            schedule(task, at: recheck, now: now)
            let probe = probe
            Task { [weak self, weak task] in
                let reachable = await probe(host, port, timeout)
                guard let task else { return }
                if reachable {
                    task.markConnected()
                    self?.watch(task)
                } else if !task.probeFailed() {
                    self?.watch(task)  // connected while the probe ran: watched for the other timeouts again
                }
            }
        }
    }

    /// The longest the timer sleeps while requests are watched. Dispatch's clock stops while the machine sleeps and
    /// `ContinuousClock` does not: a timer set further ahead could fire that much late after a wake-up. Capped, the
    /// timer looks at the table at least this often, and a timeout that passed during a sleep fires within this
    /// long of the wake-up.
    static let maxInterval = Duration.seconds(5)

    private func schedule(_ task: ResponseTask, at due: ContinuousClock.Instant, now: ContinuousClock.Instant) {
        state.withLock { Self.schedule(task, at: due, now: now, in: &$0) }
    }

    private static func schedule(
        _ task: ResponseTask, at due: ContinuousClock.Instant, now: ContinuousClock.Instant, in state: inout State
    ) {
        // A request that ended between its check and this line leaves an entry behind: it holds the request weakly,
        // and the check at its due instant (which finds the request ended) removes it.
        state.entries[ObjectIdentifier(task)] = Entry(task: task, due: due)
        let wake = min(due, now + maxInterval)
        if let current = state.wake, current <= wake { return }
        state.wake = wake
        // Set under the lock, so two requests setting the timer at once cannot leave it at the later instant.
        state.timer.schedule(deadline: dispatchTime(wake), leeway: .milliseconds(1))
    }

    /// The timer fired: checks every request that is due and sets the timer to the next instant.
    private func fire() {
        let now = ContinuousClock.now
        let due = state.withLock { state -> [ResponseTask] in
            state.wake = nil
            var due: [ResponseTask] = []
            var next: ContinuousClock.Instant?
            for (key, entry) in state.entries {
                guard let task = entry.task else {
                    state.entries[key] = nil
                    continue
                }
                if entry.due <= now {
                    due.append(task)
                } else {
                    next = min(next ?? entry.due, entry.due)
                }
            }
            if let next {
                let wake = min(next, now + Self.maxInterval)
                state.wake = wake
                state.timer.schedule(deadline: Self.dispatchTime(wake), leeway: .milliseconds(1))
            }
            return due
        }
        for task in due { check(task, now: now) }
    }

    /// `instant` on dispatch's clock (the uptime clock; the two agree on durations from now while the machine is
    /// awake, and the delay is at most ``maxInterval``).
    private static func dispatchTime(_ instant: ContinuousClock.Instant) -> DispatchTime {
        let delay = ContinuousClock.now.duration(to: instant)
        guard delay > .zero else { return .now() }
        // Seconds as a `Double`: dispatch's `+` saturates, and no `Int` conversion can trap where `Int` is 32 bits
        // (watchOS on arm64_32).
        return .now() + delay.timeInterval
    }
}
