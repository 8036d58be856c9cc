import Foundation

/// A value protected by a lock, shareable across concurrency domains.
///
/// - Important: `@unchecked Sendable` is sound because `value` is private and only ever read or written inside
///   `withLock`, which holds `lock` (an `NSLock`, itself thread-safe) for the whole access. Callers return copies
///   of value types or references to `Sendable` objects only.
final class LockedState<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
