#if AsyncHTTPClient
    import AsyncHTTPClient
    import CourierCore

    /// Watches a request body as AsyncHTTPClient uploads it, to notice a server that stopped reading it.
    ///
    /// AsyncHTTPClient takes the next chunk of a streamed body only while its connection is writable, and pauses its
    /// own write timer while it is not: a server that stops reading the body (its receive window closed) left the
    /// call waiting for ever, unless it had a deadline. The body tells the watch when AsyncHTTPClient asks for a chunk
    /// and when a chunk was handed over; ``stalled(after:)`` returns once a chunk was handed over and no next one was
    /// asked for during the idle timeout. Waiting for the caller's own stream to produce a chunk is not a stall.
    ///
    /// AsyncHTTPClient's body task can write ahead of its connection (until its event loop reports the connection
    /// unwritable: megabytes under heavy CPU load), and then holds a chunk while that backlog drains; a stall is
    /// reported only when the backlog has not drained within a whole idle timeout, as a body sent in one piece
    /// started AsyncHTTPClient's own idle timer with all of it queued. So on a link slower than a third of the
    /// socket's send buffer per idle timeout (about 5 KB/s with a 1 MB buffer and the default 60 s) a streamed upload
    /// the server still reads fails with `idleTimeout`: raise the idle timeout for such links.
    final class UploadWatch: Sendable {
        private struct State {
            /// When the last chunk was handed over, while AsyncHTTPClient has not asked for the next: the stall's start.
            var handedOverAt: ContinuousClock.Instant?
            var isFinished = false
        }

        private let state = LockedBox(State())

        /// AsyncHTTPClient asks for the next chunk: the connection took the last one.
        func asked() {
            state.withLock { $0.handedOverAt = nil }
        }

        /// A chunk went to AsyncHTTPClient.
        func handedOver() {
            let now = ContinuousClock.now
            state.withLock { $0.handedOverAt = now }
        }

        /// The body ended: what is left to send is in the connection's buffers, which AsyncHTTPClient's idle timer
        /// covers from now on.
        func finished() {
            state.withLock {
                $0.isFinished = true
                $0.handedOverAt = nil
            }
        }

        /// Returns when AsyncHTTPClient has held a chunk for `idle` without asking for the next one; throws
        /// `CancellationError` when cancelled first. After the body ended it only waits to be cancelled.
        func stalled(after idle: Duration) async throws {
            while true {
                let now = ContinuousClock.now
                let (since, isFinished) = state.withLock { ($0.handedOverAt, $0.isFinished) }
                if let since, now - since >= idle { return }
                // With no chunk held (or the body ended), the next check is a whole idle time away: a chunk handed over
                // meanwhile is held for less than that at the check, and is looked at again at its own deadline.
                let wake = isFinished ? now.advanced(by: .seconds(86_400)) : (since ?? now).advanced(by: idle)
                try await Task.sleep(until: wake, clock: .continuous)
            }
        }
    }

    extension AsyncHTTPClientTransport {
        /// Whether `request`'s body needs an ``UploadWatch``: one AsyncHTTPClient takes in chunks.
        static func needsUploadWatch(_ request: OutgoingRequest) -> Bool {
            request.body.map(sendsInChunks) ?? false
        }

        /// Runs `execute` while `watch` looks for a stalled upload; a stall fails the call with
        /// `CourierError.Code.idleTimeout` (and cancels AsyncHTTPClient's request, which closes its connection).
        static func watchingUpload(
            _ watch: UploadWatch,
            idle: Duration,
            _ execute: @escaping @Sendable () async throws -> HTTPClientResponse
        ) async throws -> HTTPClientResponse {
            try await withThrowingTaskGroup(of: HTTPClientResponse?.self) { group in
                group.addTask { try await execute() }
                group.addTask {
                    try await watch.stalled(after: idle)
                    return nil
                }
                defer { group.cancelAll() }
                if let first = try await group.next(), let response = first {
                    return response
                }
                try Task.checkCancellation()
                throw CourierError(
                    code: .idleTimeout,
                    stage: .transport,
                    message: "the server stopped reading the request body: no part of it was taken for \(idle) "
                        + "(idle timeout)"
                )
            }
        }
    }
#endif
