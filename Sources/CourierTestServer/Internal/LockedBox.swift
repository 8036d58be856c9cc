#if TestServer
    import Foundation

    /// A value guarded by an `NSLock`.
    ///
    /// `Synchronization.Mutex` needs macOS 15 and `NIOConcurrencyHelpers` is not a dependency of this target, so this
    /// is the one small lock box the target uses.
    ///
    /// Safety of `@unchecked Sendable`: `value` is private and is only read or written inside `withLock`, which holds
    /// `lock` for the whole access, so no two threads can touch it at once. `Value` must itself be `Sendable`, so no
    /// reference escapes the lock that could be mutated elsewhere without it.
    final class LockedBox<Value: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Value

        init(_ value: Value) {
            self.value = value
        }

        func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
            lock.lock()
            defer { lock.unlock() }
            return try body(&value)
        }
    }
#endif
