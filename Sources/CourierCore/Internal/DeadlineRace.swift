/// The end of a call's work or its deadline, whichever comes first (`Pipeline.withDeadline`).
///
/// A task group would wait for its children when the deadline passes: a step that does not stop when cancelled (an
/// adapter or a token provider that awaits something uncancellable, a decision that blocks) held the caller past the
/// deadline, for as long as that step took. Here the work runs in a task of its own and the caller waits on a
/// continuation that the first of the work's end, the deadline and the caller's own cancellation resumes; the work,
/// cancelled, ends in the background and its result is dropped.
final class DeadlineRace<Value: Sendable>: Sendable {
    /// What resumes the waiting caller.
    enum Outcome: Sendable {
        /// The work ended with this result.
        case finished(Result<Value, any Error>)
        /// The deadline passed first.
        case timedOut
    }

    private enum State {
        case empty
        case waiting(CheckedContinuation<Outcome, Never>)
        case decided(Outcome)
        case resumed
    }

    private let state = LockedBox(State.empty)

    init() {}

    /// Waits for the first outcome. Called once.
    func outcome() async -> Outcome {
        await withCheckedContinuation { continuation in
            let decided = state.withLock { state -> Outcome? in
                guard case .decided(let outcome) = state else {
                    state = .waiting(continuation)
                    return nil
                }
                state = .resumed
                return outcome
            }
            if let decided { continuation.resume(returning: decided) }
        }
    }

    /// Reports an outcome; only the first one counts. Returns whether it was the first.
    ///
    /// - Parameter whenFirst: Runs, under the race's lock, when `outcome` is the first: what it does happens before
    ///   any later `decide` returns.
    @discardableResult
    func decide(_ outcome: Outcome, whenFirst: () -> Void = {}) -> Bool {
        let (first, waiting) = state.withLock { state -> (Bool, CheckedContinuation<Outcome, Never>?) in
            switch state {
            case .empty:
                whenFirst()
                state = .decided(outcome)
                return (true, nil)
            case .waiting(let continuation):
                whenFirst()
                state = .resumed
                return (true, continuation)
            case .decided, .resumed:
                return (false, nil)
            }
        }
        waiting?.resume(returning: outcome)
        return first
    }
}
