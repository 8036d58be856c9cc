import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking

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
    /// Every ``turnInterval`` callbacks it also gives FoundationNetworking's other queues a turn (see ``takeTurn(_:)``),
    /// without which a fast download keeps every timer FoundationNetworking made for it until it ends.
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
        /// When the current hold ends at the latest, on the monotonic clock (a wall clock set back while a reader
        /// held back stretched the hold by as much, and every session's transfers waited with it).
        private var pauseExpiry = DispatchTime(uptimeNanoseconds: 0)
        private var isInvalidated = false
        private let maxStall: TimeInterval
        /// FoundationNetworking's multi-handle queue and the session's work queue (see ``attach(to:)``); `nil` when
        /// this FoundationNetworking has no such fields, and then no turns are given.
        private var workQueues: (multiHandle: DispatchQueue, session: DispatchQueue)?
        private var callbacksSinceTurn = 0
        private var isTakingTurn = false
        private var turns = 0
        /// The thread running one of this queue's operations right now (one at a time), if any: how
        /// ``addOperation(_:)`` knows it is called from this queue. `OperationQueue.current` told it too, but asks
        /// `_CFIsMainThread`, which makes `gettid` and `getpid` system calls: three of each per request.
        private var operationThread: pthread_t?
        /// Callbacks (of at most 16 KiB each, about 1 MiB in all) between two turns (see ``takeTurn(_:)``).
        static let turnInterval = 64

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
                condition.lock()
                operationThread = pthread_self()
                condition.unlock()
                block()
                condition.lock()
                operationThread = nil
                pendingOperations -= 1
                condition.broadcast()
                condition.unlock()
            }
            condition.lock()
            // Never wait on the delegate queue itself: the operations it would wait for run there.
            if let thread = operationThread, pthread_equal(thread, pthread_self()) != 0 {
                condition.unlock()
                return
            }
            while !isInvalidated {
                if pendingOperations > maxPendingOperations {
                    condition.wait()
                } else if isPaused, case let now = DispatchTime.now(), now < pauseExpiry {
                    // `NSCondition` waits on the wall clock: in slices, each checked against the monotonic expiry.
                    let remaining = Double(pauseExpiry.uptimeNanoseconds - now.uptimeNanoseconds) / 1e9
                    _ = condition.wait(until: Date(timeIntervalSinceNow: min(remaining, 0.1)))
                } else {
                    break
                }
            }
            let turn = dueTurn()
            condition.unlock()
            if let turn { takeTurn(turn) }
        }

        /// Whether ``attach(to:)`` found FoundationNetworking's queues.
        var isAttached: Bool {
            condition.lock()
            defer { condition.unlock() }
            return workQueues != nil
        }

        /// How many turns were given (see ``takeTurn(_:)``).
        var turnsTaken: Int {
            condition.lock()
            defer { condition.unlock() }
            return turns
        }

        /// Finds `session`'s work queue and its multi handle's queue, which turns need.
        ///
        /// FoundationNetworking does not expose them: they are read by reflection, by the names its 6.x sources give
        /// them (`URLSession.workQueue`, `_MultiHandle.queue`). Where they are missing, nothing changes but the memory
        /// a fast download keeps (`DeliveryQueueTests` fails on such a FoundationNetworking).
        func attach(to session: URLSession) {
            let mirror = Mirror(reflecting: session)
            guard let sessionQueue = mirror.descendant("workQueue") as? DispatchQueue,
                let multiHandleQueue = mirror.descendant("multiHandle", "queue") as? DispatchQueue
            else { return }
            condition.lock()
            workQueues = (multiHandleQueue, sessionQueue)
            condition.unlock()
        }

        /// Counts a callback; every ``turnInterval`` callbacks, the queues a turn needs (see ``takeTurn(_:)``). Called
        /// with `condition` locked, in the same locked section as the wait for the reader, so a callback takes the lock
        /// no more often than before turns existed.
        private func dueTurn() -> (multiHandle: DispatchQueue, session: DispatchQueue)? {
            callbacksSinceTurn += 1
            guard callbacksSinceTurn >= Self.turnInterval, !isTakingTurn, !isInvalidated, let queues = workQueues
            else { return nil }
            callbacksSinceTurn = 0
            isTakingTurn = true
            turns += 1
            return queues
        }

        /// Lets the rest of the session's work queue run once, so that FoundationNetworking frees the timers of a
        /// fast download as it goes.
        ///
        /// libcurl calls back here from FoundationNetworking's multi-handle queue, a serial queue that targets the
        /// session's work queue. For each write callback FoundationNetworking replaces the request's timeout timer
        /// (`_EasyHandle.resetTimer()`), a dispatch source on the task's own work queue, which also targets the
        /// session's; libdispatch frees a cancelled source only once that queue has run. During a fast download
        /// libcurl asks to be called again at once after each pass of reads, so the multi-handle queue never empties,
        /// its thread never leaves it, and the task's queue never runs: every timer of the download stayed allocated
        /// (47 of the 50 MiB of heap at the peak of a 1 GiB download, seen with heaptrack). Suspending the multi-handle
        /// queue ends its drain after the current pass; the thread then runs what waits on the session's work queue
        /// (the task's queue, which frees the timers), then the block below, which resumes it. Each suspension has
        /// exactly one resumption, and the block holds both queues until then.
        private func takeTurn(_ queues: (multiHandle: DispatchQueue, session: DispatchQueue)) {
            queues.multiHandle.suspend()
            queues.session.async { [self] in
                condition.lock()
                isTakingTurn = false
                condition.unlock()
                queues.multiHandle.resume()
            }
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
                pauseExpiry = DispatchTime.now() + maxStall
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
