/// At most `limit` calls at a time between their adapters and their response, the others waiting in order
/// (``Client/Configuration/maxConcurrentRequests``).
///
/// A call takes its slot before its adapters run, so a call that waits is signed when it goes, with the credential
/// current then: after a token refresh, the queued calls carry the new token instead of a rejected one (OkHttp's
/// dispatcher has the same effect; a transport's own connection queue does not, since its requests were signed
/// before they queued).
final class ConcurrencyLimiter: Sendable {
    private struct State {
        var available: Int
        var nextID: UInt64 = 0
        var waiters: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        var waitersStart = 0
    }

    private let state: LockedBox<State>

    init(limit: Int) {
        state = LockedBox(State(available: max(1, limit)))
    }

    /// Waits for a slot; throws `CancellationError` (and takes none) when the task is cancelled while waiting.
    func acquire() async throws {
        let id: UInt64? = state.withLock { state in
            if state.available > 0 {
                state.available -= 1
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Checked again under the lock that queues the call: a slot given back since the check above went
                // to the pool (there was no waiter yet), and a call queued behind it would wait for the next
                // release, which may never come.
                let outcome = state.withLock { state -> Result<Void, CancellationError>? in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if state.available > 0 {
                        state.available -= 1
                        return .success(())
                    }
                    state.waiters.append((id, continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome.mapError { $0 as any Error }) }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.waiters[state.waitersStart...].firstIndex(where: { $0.id == id }) else {
                    return nil
                }
                return state.waiters.remove(at: index).continuation
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Gives a slot back: to the longest waiter, else to the pool.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard state.waitersStart < state.waiters.count else {
                state.available += 1
                return nil
            }
            let next = state.waiters[state.waitersStart].continuation
            state.waitersStart += 1
            if state.waitersStart > 64, state.waitersStart * 2 > state.waiters.count {
                state.waiters.removeFirst(state.waitersStart)
                state.waitersStart = 0
            }
            return next
        }
        next?.resume()
    }

    /// Slots free (for tests).
    var free: Int { state.withLock { $0.available } }

    /// Calls waiting for a slot (for tests).
    var waiting: Int { state.withLock { $0.waiters.count - $0.waitersStart } }
}
