#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#endif

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
    /// task, and the entry is removed before that task returns. ``cancel(where:)`` takes a handle only from an entry
    /// that exists, under the lock, and counts itself in the entry's `cancellers` until its `cancel()` has returned;
    /// the task waits for that count to be zero before it removes its entry and returns. So `cancel()` never reaches
    /// a task that has ended.
    private struct TaskHandle: @unchecked Sendable {
        let task: UnsafeCurrentTask?
        func cancel() { task?.cancel() }
    }

    /// A registered call. Its task handle is kept apart, in ``State/tasks``: `UnsafeCurrentTask` is a type of a
    /// library built for evolution, whose size is known only at run time, and with it in the entry every copy,
    /// assignment and destruction of an optional entry went through the type's value witnesses (about 1,300
    /// instructions per call in issue #17's profile).
    private struct Entry {
        var tags: Set<RequestTag>
        var isCancelled = false
        /// The ``cancel(where:)`` calls cancelling this entry's task right now, outside the lock.
        var cancellers = 0
        /// When it was registered, in registrations: ``cancel(where:)`` leaves the calls that started after it began.
        var serial: UInt64 = 0
    }

    /// The entries in slots: a call takes a free slot (or a new one) and gives it back when it ends, with no hashing
    /// (a dictionary keyed by a call number cost about 1 µs per call in issue #17's profile).
    private struct State {
        var slots: [Entry?] = []
        /// The task of the entry in the same slot, once it has attached (``RequestRegistry/attach(to:)``).
        var tasks: [TaskHandle] = []
        var freeSlots: [Int] = []
        /// The next entry's ``Entry/serial``.
        var nextSerial: UInt64 = 0

        /// The calls in flight: the slots taken.
        var count: Int { slots.count - freeSlots.count }

        /// Makes an entry for `tags`, without a task yet; returns its slot.
        mutating func insert(tags: Set<RequestTag>) -> Int {
            let entry = Entry(tags: tags, serial: nextSerial)
            nextSerial &+= 1
            if let slot = freeSlots.popLast() {
                slots[slot] = entry
                return slot
            }
            slots.append(entry)
            tasks.append(TaskHandle(task: nil))
            return slots.count - 1
        }

        /// Removes the entry in `slot` unless a ``RequestRegistry/cancel(where:)`` is cancelling its task right now;
        /// returns whether it did.
        mutating func removeUnlessCancelling(_ slot: Int) -> Bool {
            guard (slots[slot]?.cancellers ?? 0) == 0 else { return false }
            remove(slot)
            return true
        }

        private mutating func remove(_ slot: Int) {
            slots[slot] = nil
            // The handle must not outlive its task (nor keep it).
            tasks[slot] = TaskHandle(task: nil)
            freeSlots.append(slot)
            if count == 0, slots.count > State.keptSlots {
                // After a burst, the memory goes back.
                slots = []
                tasks = []
                freeSlots = []
            }
        }

        /// The slots kept when no call is in flight.
        static let keptSlots = 256
    }

    private let state = LockedBox(State())

    init() {}

    /// Whether the calls of the current task stay out of every registry: ``Client/cancelAll()`` and
    /// ``Client/cancelAll(tagged:)`` do not reach them, only their task's own cancellation does.
    ///
    /// Set for a token refresh (`Authenticator`). It runs in a task of its own on behalf of every call that waits
    /// for it, and a rotated refresh token exists only in its response: cancelled with the calls in flight, the
    /// refresh failed every waiter (also calls that joined it after `cancelAll()` returned), and a refresh token
    /// the server had already rotated was lost, so the next refresh sent the old one and ended the session.
    @TaskLocal static var isExempt = false

    /// The number of calls in flight.
    var count: Int { state.withLock { $0.count } }

    /// A call's entry, made in the caller before the task that runs the call starts (``enter(tags:)``), so that a
    /// ``cancel(where:)`` from then on finds the call, even before that task has run a line.
    struct Ticket: Sendable {
        fileprivate let slot: Int
    }

    /// Makes the entry of a call about to start under `tags`; the call's task then runs with ``run(_:_:)``, which
    /// removes the entry as it ends. Every ticket must be run exactly once.
    func enter(tags: Set<RequestTag>) -> Ticket {
        Ticket(slot: state.withLock { $0.insert(tags: tags) })
    }

    /// Runs `operation` in a child task registered under `tags`, and waits for it.
    ///
    /// Cancelling the calling task, ``cancel(where:)`` for a matching entry, or cancelling a parent job cancels
    /// the child. The entry is made before the child starts (a cancel between the two throws `CancellationError`
    /// without running `operation`) and removed when `operation` ends.
    ///
    /// A child task rather than the calling task itself, so that ``cancel(where:)`` cancels the call and not the
    /// caller's other work; an `async let` rather than an unstructured `Task`, which cost five more allocations, an
    /// escaping closure and a cancellation handler per call (issue #17).
    func run<Value: Sendable>(
        tags: Set<RequestTag>,
        _ operation: @Sendable () async throws -> Value
    ) async throws -> Value {
        // Through the nested `run`, whose frame holds the `async let`: made inline here, the frames were 96 bytes
        // smaller in all, but the 880-byte frame no longer fitted the calling task's first task-allocator slab, and
        // each call in flight held one more 1 KiB slab (courier-loopback --scale 10000: 21,600 -> 22,500 bytes).
        try await run(enter(tags: tags), operation)
    }

    /// Runs `operation` in a child task under the entry `ticket` made (for a call whose task was started after
    /// its entry was made: ``Client/transfer(_:tags:)``), and removes the entry as it ends.
    func run<Value: Sendable>(
        _ ticket: Ticket,
        _ operation: @Sendable () async throws -> Value
    ) async throws -> Value {
        async let value = claimed(ticket.slot, operation)
        return try await value
    }

    /// The entry of a call about to start in a task of its own (``enter(tags:)``), or `nil` when the current task is
    /// a token refresh's (``isExempt``); the call runs with `run(_:_:)`, which takes the optional ticket.
    func enterUnlessExempt(tags: Set<RequestTag>) -> Ticket? {
        Self.isExempt ? nil : enter(tags: tags)
    }

    /// `operation` under `ticket`, or unregistered without one (a token refresh's call).
    func run<Value: Sendable>(
        _ ticket: Ticket?,
        _ operation: @Sendable () async throws -> Value
    ) async throws -> Value {
        guard let ticket else { return try await operation() }
        return try await run(ticket, operation)
    }

    /// ``run(tags:_:)``, or `operation` unregistered when the current task is a token refresh's (``isExempt``): for
    /// ``Client/exchange(for:tags:)``. `Client.send(_:tags:)` checks on its own, so that `run`'s frame, which every
    /// call in flight keeps, does not grow by the branch (16 bytes).
    func runUnlessExempt<Value: Sendable>(
        tags: Set<RequestTag>,
        _ operation: @Sendable () async throws -> Value
    ) async throws -> Value {
        if Self.isExempt { return try await operation() }
        return try await run(tags: tags, operation)
    }

    /// Runs `operation` as the task of the entry in `slot`, and removes the entry as it ends; throws
    /// `CancellationError` without running it when the entry was cancelled before this task started.
    /// `nonisolated(nonsending)`: it runs on the child task's executor, without a switch of its own (see `Pipeline`).
    private nonisolated(nonsending) func claimed<Value: Sendable>(
        _ slot: Int,
        _ operation: @Sendable () async throws -> Value
    ) async throws -> Value {
        defer { unregister(slot) }
        guard attach(to: slot) else { throw CancellationError() }
        return try await operation()
    }

    /// Runs `operation` with the current (child) task as the task of the registration in `slot`, which has none
    /// otherwise. `nonisolated(nonsending)`, like ``claimed(_:_:)``.
    private nonisolated(nonsending) func attached<Value: Sendable>(
        to slot: Int, _ operation: @Sendable () async throws -> Value
    ) async throws -> Value {
        guard attach(to: slot) else { throw CancellationError() }
        defer { detach(slot) }
        return try await operation()
    }

    /// Makes the current task the one ``cancel(where:)`` cancels for the entry in `slot`; `false` when that entry
    /// was cancelled already.
    private func attach(to slot: Int) -> Bool {
        withUnsafeCurrentTask { task in
            state.withLock { state -> Bool in
                // Read and written in place: `if let entry = state.slots[slot]` copied the entry.
                guard state.slots[slot]?.isCancelled == false else { return false }
                state.tasks[slot] = TaskHandle(task: task)
                return true
            }
        }
    }

    /// Takes the task back from the registration in `slot` as that task ends, after any ``cancel(where:)`` that is
    /// cancelling it returned (the handle must not outlive the task, as in ``unregister(_:)``).
    private func detach(_ slot: Int) {
        while !state.withLock({ state -> Bool in
            guard (state.slots[slot]?.cancellers ?? 0) == 0 else { return false }
            state.tasks[slot] = TaskHandle(task: nil)
            return true
        }) {
            sched_yield()
        }
    }

    /// Removes a call's entry as its task ends. When a ``cancel(where:)`` is calling this task's `cancel()` at that
    /// moment (outside the lock, running its cancellation handlers), the task waits for it to return: the handle
    /// must not outlive the task. That is the time one `cancel()` takes, and only for a call cancelled as it ends.
    private func unregister(_ slot: Int) {
        while !state.withLock({ $0.removeUnlessCancelling(slot) }) {
            sched_yield()
        }
    }

    /// Cancels every call in flight whose tags satisfy `matches`; returns how many were cancelled.
    ///
    /// The tasks are cancelled outside the registry's lock: cancelling runs a task's cancellation handlers right
    /// here, synchronously, and a handler may itself cancel calls (a transport's, a caller's), which takes the lock.
    /// One entry at a time: an entry is marked (and its task made to wait before it ends) only just before its own
    /// `cancel()`, so a call that ends meanwhile waits for one `cancel()` at most, not for all the others'.
    @discardableResult
    func cancel(where matches: (Set<RequestTag>) -> Bool) -> Int {
        var cancelled = 0
        var next = 0
        // Calls that register while this runs (between two entries, outside the lock) started after it: not theirs.
        let started = state.withLock { $0.nextSerial }
        while true {
            let found = state.withLock { state -> (slot: Int, task: TaskHandle)? in
                while next < state.slots.count {
                    let slot = next
                    next += 1
                    guard let entry = state.slots[slot], entry.serial < started, !entry.isCancelled,
                        matches(entry.tags)
                    else { continue }
                    state.slots[slot]?.isCancelled = true
                    state.slots[slot]?.cancellers += 1
                    return (slot, state.tasks[slot])
                }
                return nil
            }
            guard let found else { return cancelled }
            // The entry is still in `slot`: its task waits for `cancellers` to drop to zero before removing it.
            found.task.cancel()
            state.withLock { $0.slots[found.slot]?.cancellers -= 1 }
            cancelled += 1
        }
    }

    /// A registration without a task of its own: a page sequence between its pages, or an event stream, which
    /// ``cancel(where:)`` marks cancelled (the sequence checks before its next step); ``run(_:)`` lends it a child
    /// task for a step that must be cancellable while it runs. Removed when the last copy of it goes.
    final class Registration: Sendable {
        private let registry: RequestRegistry
        private let slot: Int

        fileprivate init(registry: RequestRegistry, slot: Int) {
            self.registry = registry
            self.slot = slot
        }

        /// Whether ``RequestRegistry/cancel(where:)`` cancelled it.
        var isCancelled: Bool { registry.state.withLock { $0.slots[slot]?.isCancelled ?? true } }

        /// Runs `operation` in a child task that cancelling this registration cancels (an event stream's connection,
        /// body read or reconnect pause: work in the caller's task, which ``RequestRegistry/cancel(where:)`` must not
        /// cancel). Throws `CancellationError` without running it when the registration was cancelled before.
        ///
        /// One `run` at a time per registration: its owner (one iterator) awaits each before the next.
        func run<Value: Sendable>(_ operation: @Sendable () async throws -> Value) async throws -> Value {
            async let value = registry.attached(to: slot, operation)
            return try await value
        }

        deinit {
            // No task handle, so no `cancel()` can be running on it: `cancellers` is back to zero under the lock.
            registry.unregister(slot)
        }
    }

    /// Registers a page sequence under `tags`, until the returned registration goes.
    func register(tags: Set<RequestTag>) -> Registration {
        let slot = state.withLock { $0.insert(tags: tags) }
        return Registration(registry: self, slot: slot)
    }
}
