/// The calls a client (and every client derived from it) has in flight, so that they can be cancelled from outside.
///
/// Each registered call runs in a child task of its caller (`async let`: allocated in the caller's task allocator,
/// cancelled with its caller); the registry keeps a handle that cancels that child, and the call's tags, until the
/// call ends. Entries are removed when their call ends, however it ends, so the registry never grows past the number
/// of calls in flight.
final class RequestRegistry: Sendable {
    /// A handle that cancels one registered call's task.
    ///
    /// `@unchecked Sendable` is sound: `UnsafeCurrentTask` is not `Sendable` because it must not outlive its task,
    /// and `cancel()` is thread-safe. The handle is stored in an entry when the call starts, inside the call's own
    /// task, and the entry is removed, under the same lock, before that task returns; ``cancel(where:)`` calls
    /// `cancel()` only under that lock, while the entry exists. So `cancel()` never reaches a task that has ended.
    private struct TaskHandle: @unchecked Sendable {
        let task: UnsafeCurrentTask?
        func cancel() { task?.cancel() }
    }

    private struct Entry {
        var tags: Set<RequestTag>
        var task: TaskHandle
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

    /// Runs `operation` in a child task registered under `tags`, and waits for it.
    ///
    /// Cancelling the calling task, ``cancel(where:)`` for a matching entry, or cancelling a parent job cancels
    /// the child. The entry is removed when `operation` ends.
    ///
    /// A child task rather than the calling task itself, so that ``cancel(where:)`` cancels the call and not the
    /// caller's other work; an `async let` rather than an unstructured `Task`, which cost five more allocations, an
    /// escaping closure and a cancellation handler per call (issue #17).
    func run<Value: Sendable>(
        tags: Set<RequestTag>,
        _ operation: @Sendable () async throws -> Value
    ) async throws -> Value {
        async let value = registered(tags: tags, operation)
        return try await value
    }

    /// `nonisolated(nonsending)`: it runs on the child task's executor, without a switch of its own (see `Pipeline`).
    private nonisolated(nonsending) func registered<Value: Sendable>(
        tags: Set<RequestTag>,
        _ operation: @Sendable () async throws -> Value
    ) async throws -> Value {
        let id = withUnsafeCurrentTask { task in
            state.withLock { state -> UInt64 in
                state.nextID += 1
                state.entries[state.nextID] = Entry(tags: tags, task: TaskHandle(task: task))
                return state.nextID
            }
        }
        defer { _ = state.withLock { $0.entries.removeValue(forKey: id) } }
        return try await operation()
    }

    /// Cancels every call in flight whose tags satisfy `matches`; returns how many were cancelled.
    @discardableResult
    func cancel(where matches: (Set<RequestTag>) -> Bool) -> Int {
        // Under the lock: an entry's task is alive while the entry exists (see `TaskHandle`). Cancelling runs the
        // task's cancellation handlers here, synchronously; none of Courier's touches the registry.
        state.withLock { state in
            var count = 0
            for (id, entry) in state.entries where !entry.isCancelled && matches(entry.tags) {
                state.entries[id]?.isCancelled = true
                entry.task.cancel()
                count += 1
            }
            return count
        }
    }
}
