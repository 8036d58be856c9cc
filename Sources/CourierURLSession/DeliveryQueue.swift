import Foundation

#if canImport(FoundationNetworking)
    /// The delegate queue of one ``SessionLane`` on Linux: the only place where a download can be slowed down.
    ///
    /// FoundationNetworking hands every chunk libcurl reads to the delegate queue with `addOperation(_:)`, called on
    /// the session's work queue, and does not wait; it cannot pause a transfer (`URLSessionTask.suspend()` removes it
    /// from libcurl and `resume()` starts the request over, so the body is delivered twice). Blocking inside
    /// `addOperation(_:)` is what slows libcurl down, and through TCP flow control the server.
    ///
    /// FoundationNetworking (6.3) runs the work of every session of the process on one shared work queue, so while
    /// this blocks, every URLSession transfer in the process waits (seen in a debugger: other sessions' `dataTask(with:)`
    /// wait in `workQueue.sync` behind a blocked `addOperation(_:)`). Waiting for queued callbacks never depends on a
    /// reader and is short. Waiting for a reader (``pause(_:)``) lasts until it drains (``resume(_:)``), its request
    /// ends (``release(_:)``) or the lane closes (``invalidate()``), and at most `maxStall`: a reader that has not
    /// drained by then stops holding the others back, and its body buffers up to its hard limit (see
    /// ``ResponseTask``).
    ///
    /// Each request gets a generation number from ``begin()``; a late call for an earlier request is ignored.
    ///
    /// - Important: `@unchecked Sendable` is sound because the mutable properties are private and only accessed
    ///   while `condition` (an `NSCondition`) is locked; `OperationQueue` itself is thread-safe.
    final class DeliveryQueue: OperationQueue, @unchecked Sendable {
        private let condition = NSCondition()
        private let maxPendingOperations: Int
        private var pendingOperations = 0
        private var generation = 0
        private var releasedGeneration = 0
        private var isPaused = false
        private var pauseExpiry = Date.distantPast
        private var isInvalidated = false
        private let maxStall: TimeInterval

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
                } else if isPaused && Date() < pauseExpiry {
                    _ = condition.wait(until: pauseExpiry)
                } else {
                    break
                }
            }
            condition.unlock()
        }

        /// Starts serving a new request; returns its generation.
        func begin() -> Int {
            condition.lock()
            defer { condition.unlock() }
            generation += 1
            isPaused = false
            condition.broadcast()
            return generation
        }

        /// The request's reader is over its high-water mark: hold libcurl back until ``resume(_:)``, for at most
        /// `maxStall`.
        func pause(_ request: Int) {
            condition.lock()
            if request == generation && request > releasedGeneration {
                isPaused = true
                pauseExpiry = Date(timeIntervalSinceNow: maxStall)
            }
            condition.unlock()
        }

        /// The request's reader drained below its low-water mark.
        func resume(_ request: Int) {
            condition.lock()
            if request == generation {
                isPaused = false
                condition.broadcast()
            }
            condition.unlock()
        }

        /// The request ended (finished, failed or cancelled): never hold its transfer back again, even if a
        /// ``pause(_:)`` for it arrives later.
        func release(_ request: Int) {
            condition.lock()
            releasedGeneration = max(releasedGeneration, request)
            if request == generation {
                isPaused = false
                condition.broadcast()
            }
            condition.unlock()
        }

        /// Releases every waiter for good (the lane's session is being invalidated).
        func invalidate() {
            condition.lock()
            isInvalidated = true
            condition.broadcast()
            condition.unlock()
        }
    }
#endif
