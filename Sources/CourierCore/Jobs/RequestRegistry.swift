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

    /// The entries in slots: a call takes a free slot (or a new one) and gives it back when it ends, with no hashing
    /// (a dictionary keyed by a call number cost about 1 µs per call in issue #17's profile).
    private struct State {
        var slots: [Entry?] = []
        var freeSlots: [Int] = []

        /// The calls in flight: the slots taken.
        var count: Int { slots.count - freeSlots.count }

        mutating func insert(_ entry: Entry) -> Int {
            if let slot = freeSlots.popLast() {
                slots[slot] = entry
                return slot
            }
            slots.append(entry)
            return slots.count - 1
        }

        mutating func remove(_ slot: Int) {
            slots[slot] = nil
            freeSlots.append(slot)
            if count == 0, slots.count > State.keptSlots {
                // After a burst, the memory goes back.
                slots = []
                freeSlots = []
            }
        }

        /// The slots kept when no call is in flight.
        static let keptSlots = 256
    }

    private let state = LockedBox(State())

    init() {}

    /// The number of calls in flight.
    var count: Int { state.withLock { $0.count } }

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
        let slot = withUnsafeCurrentTask { task in
            state.withLock { $0.insert(Entry(tags: tags, task: TaskHandle(task: task))) }
        }
        defer { state.withLock { $0.remove(slot) } }
        return try await operation()
    }

    /// Cancels every call in flight whose tags satisfy `matches`; returns how many were cancelled.
    @discardableResult
    func cancel(where matches: (Set<RequestTag>) -> Bool) -> Int {
        // Under the lock: an entry's task is alive while the entry exists (see `TaskHandle`). Cancelling runs the
        // task's cancellation handlers here, synchronously; none of Courier's touches the registry.
        state.withLock { state in
            var count = 0
            for slot in state.slots.indices {
                guard let entry = state.slots[slot], !entry.isCancelled, matches(entry.tags) else { continue }
                state.slots[slot]?.isCancelled = true
                entry.task.cancel()
                count += 1
            }
            return count
        }
    }
}
