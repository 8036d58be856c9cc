/// The calls a client (and every client derived from it) has in flight, so that they can be cancelled from outside.
///
/// Each registered call runs in its own task; the registry keeps a way to cancel that task and the call's tags
/// until the call ends. Entries are removed when their call ends, however it ends, so the registry never grows
/// past the number of calls in flight.
final class RequestRegistry: Sendable {
    private struct Entry {
        var tags: Set<RequestTag>
        var cancel: (@Sendable () -> Void)?
        var isCancelled = false
    }

    private struct State {
        var nextID: UInt64 = 0
        var entries: [UInt64: Entry] = [:]
    }

    private let state = LockedBox(State())

    init() {}

    /// The number of calls in flight.
    var count: Int { state.withLock { $0.entries.count } }

    /// Runs `operation` in a new task registered under `tags`, and waits for it.
    ///
    /// Cancelling the calling task, ``cancel(where:)`` for a matching entry, or cancelling a parent job cancels
    /// the new task. The entry is removed when `operation` ends.
    func run<Value: Sendable>(
        tags: Set<RequestTag>,
        _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.entries[state.nextID] = Entry(tags: tags)
            return state.nextID
        }
        defer { _ = state.withLock { $0.entries.removeValue(forKey: id) } }
        let task = Task { try await operation() }
        let cancelledEarly = state.withLock { state -> Bool in
            guard state.entries[id]?.isCancelled == false else { return true }
            state.entries[id]?.cancel = { task.cancel() }
            return false
        }
        if cancelledEarly { task.cancel() }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Cancels every call in flight whose tags satisfy `matches`; returns how many were cancelled.
    @discardableResult
    func cancel(where matches: (Set<RequestTag>) -> Bool) -> Int {
        let cancels = state.withLock { state -> [(@Sendable () -> Void)?] in
            var cancels: [(@Sendable () -> Void)?] = []
            for (id, entry) in state.entries where !entry.isCancelled && matches(entry.tags) {
                state.entries[id]?.isCancelled = true
                cancels.append(entry.cancel)
            }
            return cancels
        }
        for cancel in cancels { cancel?() }
        return cancels.count
    }
}
