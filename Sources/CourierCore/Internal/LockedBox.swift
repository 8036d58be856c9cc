import Foundation

/// A value protected by a lock, shareable across concurrency domains.
///
/// `Synchronization.Mutex` would be the natural choice, but it needs macOS 15 / iOS 18 and Courier supports
/// earlier systems, so this box wraps `NSLock` instead.
///
/// - Important: `@unchecked Sendable` is sound here because `value` is private and only ever read or written
///   inside `withLock`, which holds `lock` for the whole access; `NSLock` is itself thread-safe. No reference to
///   `value` escapes the closure (the closure's result must be `Sendable`-agnostic, but callers only return
///   copies of value types).
package final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
