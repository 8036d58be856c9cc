#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#endif

/// A value protected by a lock, shareable across concurrency domains.
///
/// `Synchronization.Mutex` would be the natural choice, but it needs macOS 15 / iOS 18 and Courier supports earlier
/// systems. `NSLock` costs three allocations on Linux (the box, the lock object and its mutex) and a class hop per
/// lock; this box is one allocation: the value and the platform's lock (`os_unfair_lock` on Apple platforms, a
/// `pthread_mutex_t` elsewhere) live in one `ManagedBuffer`, as SwiftNIO's `NIOLockedValueBox` does it. Every
/// call creates one (its record), so the difference shows per call.
package struct LockedBox<Value>: @unchecked Sendable {
    // `@unchecked Sendable` is sound: the only stored property is the storage reference, and the storage's value is
    // only ever read or written inside `withLock`, which holds the lock for the whole access. No reference to the
    // value escapes the closure (callers return copies of value types).
    private let storage: Storage

    package init(_ value: Value) {
        storage = Storage.create(value)
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withLock(body)
    }

    /// The value (the header) and the lock (the single element), in one allocation.
    final class Storage: ManagedBuffer<Value, PlatformLock.Primitive> {
        static func create(_ value: Value) -> Storage {
            let buffer = Storage.create(minimumCapacity: 1) { _ in value }
            let storage = unsafeDowncast(buffer, to: Storage.self)
            storage.withUnsafeMutablePointerToElements { PlatformLock.initialize($0) }
            return storage
        }

        func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
            try withUnsafeMutablePointers { value, lock in
                PlatformLock.lock(lock)
                defer { PlatformLock.unlock(lock) }
                return try body(&value.pointee)
            }
        }

        deinit {
            withUnsafeMutablePointerToElements { PlatformLock.destroy($0) }
        }
    }
}

/// The platform's lock (`os_unfair_lock` on Apple platforms, a `pthread_mutex_t` elsewhere), kept in place in an
/// object's memory (a `ManagedBuffer`'s element), which is what makes it safe to use: a Swift variable of a C lock
/// type may be moved. For ``LockedBox`` and `CallState`.
enum PlatformLock {
    #if canImport(Darwin)
        typealias Primitive = os_unfair_lock
    #else
        typealias Primitive = pthread_mutex_t
    #endif

    /// Initializes the uninitialized memory at `lock` as an unlocked lock.
    static func initialize(_ lock: UnsafeMutablePointer<Primitive>) {
        #if canImport(Darwin)
            lock.initialize(to: os_unfair_lock())
        #else
            lock.initialize(to: pthread_mutex_t())
            let result = pthread_mutex_init(lock, nil)
            precondition(result == 0, "pthread_mutex_init failed: \(result)")
        #endif
    }

    static func lock(_ lock: UnsafeMutablePointer<Primitive>) {
        #if canImport(Darwin)
            os_unfair_lock_lock(lock)
        #else
            pthread_mutex_lock(lock)
        #endif
    }

    static func unlock(_ lock: UnsafeMutablePointer<Primitive>) {
        #if canImport(Darwin)
            os_unfair_lock_unlock(lock)
        #else
            pthread_mutex_unlock(lock)
        #endif
    }

    /// Destroys the (unlocked) lock at `lock`, leaving its memory uninitialized.
    static func destroy(_ lock: UnsafeMutablePointer<Primitive>) {
        #if !canImport(Darwin)
            pthread_mutex_destroy(lock)
        #endif
        lock.deinitialize(count: 1)
    }
}
