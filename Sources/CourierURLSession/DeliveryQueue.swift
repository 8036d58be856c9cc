import Foundation

#if canImport(FoundationNetworking)
    /// The delegate queue of a Linux ``URLSessionTransport``: the only place where a download can be slowed down.
    ///
    /// FoundationNetworking hands every chunk libcurl reads to the delegate queue with `addOperation(_:)`, called
    /// on the session's work queue, and does not wait. `URLSessionTask.suspend()` cannot pause a download there: it
    /// removes the transfer from libcurl, and `resume()` starts the request over, so the body is delivered twice.
    /// Blocking inside `addOperation(_:)` is what slows libcurl down (and, through TCP flow control, the server):
    /// it waits while more than `maxPendingOperations` callbacks are queued, and while a response body of the
    /// session has more unread bytes than its high-water mark.
    ///
    /// All sessions of a FoundationNetworking process share one work queue, so while this waits for a reader,
    /// every URLSession transfer in the process waits. A pause therefore lasts at most `maxStall`: a reader that
    /// has not drained its body by then stops holding the others back, and its body buffers up to its hard limit
    /// (see ``ResponseTask``). Waiting for queued callbacks never depends on a reader and is always short.
    ///
    /// - Important: `@unchecked Sendable` is sound because the mutable counters are private and only accessed
    ///   while `condition` (an `NSCondition`) is locked; `OperationQueue` itself is thread-safe.
    final class DeliveryQueue: OperationQueue, @unchecked Sendable {
        private let condition = NSCondition()
        private let maxPendingOperations: Int
        private let maxStall: TimeInterval
        private var pendingOperations = 0
        private var pauses: [ObjectIdentifier: Date] = [:]
        private var isInvalidated = false

        init(maxPendingOperations: Int, maxStall: Duration) {
            self.maxPendingOperations = maxPendingOperations
            self.maxStall = maxStall.timeInterval
            super.init()
            maxConcurrentOperationCount = 1
            name = "Courier.URLSessionTransport.delegate"
        }

        override func addOperation(_ block: @escaping @Sendable () -> Void) {
            condition.lock()
            pendingOperations += 1
            condition.unlock()
            super.addOperation { [self] in
                block()
                condition.lock()
                pendingOperations -= 1
                condition.broadcast()
                condition.unlock()
            }
            // Never wait on the delegate queue itself: the operations it would wait for run there.
            guard OperationQueue.current !== self else { return }
            condition.lock()
            while !isInvalidated {
                if pendingOperations > maxPendingOperations {
                    condition.wait()
                    continue
                }
                let now = Date()
                pauses = pauses.filter { $0.value > now }
                guard let expiry = pauses.values.min() else { break }
                _ = condition.wait(until: expiry)
            }
            condition.unlock()
        }

        /// A response body went over its high-water mark: hold libcurl back for at most `maxStall`.
        func pauseDelivery(for body: ObjectIdentifier) {
            condition.lock()
            pauses[body] = Date(timeIntervalSinceNow: maxStall)
            condition.unlock()
        }

        /// A paused body was drained below its low-water mark, finished or failed.
        func resumeDelivery(for body: ObjectIdentifier) {
            condition.lock()
            pauses[body] = nil
            condition.broadcast()
            condition.unlock()
        }

        /// Releases every waiter for good (the session is being invalidated).
        func invalidate() {
            condition.lock()
            isInvalidated = true
            condition.broadcast()
            condition.unlock()
        }
    }
#endif
