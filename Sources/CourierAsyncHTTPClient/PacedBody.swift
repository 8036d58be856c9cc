#if AsyncHTTPClient
    import AsyncHTTPClient
    import CourierCore
    import NIOCore

    extension AsyncHTTPClientTransport {
        /// A response body read chunk by chunk by a reader that may hold back (a live body, an event stream, a
        /// download), which reads a little ahead while its reader does not ask, so that a connection whose server is
        /// sending is not closed as idle.
        ///
        /// AsyncHTTPClient's idle timer (its `read` timeout) restarts when bytes arrive from the socket, and it stops
        /// reading from the socket while chunks it has read wait for the reader. A reader that held back longer than
        /// the idle timeout (a slow step per record of a JSON Lines stream, a consumer that pauses) therefore had its
        /// connection closed with `idleTimeout` while the server was still sending.
        ///
        /// Here, once half the idle timeout has passed since AsyncHTTPClient last had to read the socket and the
        /// reader is not reading, a keeper task takes chunks into a read-ahead buffer until AsyncHTTPClient must have
        /// read the socket again: ``readAheadStep`` bytes taken, more than it holds after one read. (Whether one chunk
        /// came from the socket cannot be seen: timing the wait for it proved unreliable.) The timer then counts only
        /// the server's silence, give or take five eighths of the timeout. The read-ahead stops at
        /// ``readAheadLimit`` bytes, at least six idle timeouts of holding back; past that, a reader that still holds
        /// back gets `idleTimeout`, saying so. The reader takes read-ahead chunks first, in order.
        ///
        /// Not for an HTTP/2 stream or a body AsyncHTTPClient decompresses (`idle` is `nil` for them): one read there
        /// hands over up to the stream's 8 MiB window, or what 256 KiB decompress to, so no bounded read-ahead is sure
        /// to make it read again. Their readers keep AsyncHTTPClient's own timer.
        ///
        /// `@unchecked Sendable` is sound: `iterator` is used by one task at a time, the one that `state.holder` names
        /// (set and cleared under the lock before and after each `next()`), and the rest of the state is under the
        /// lock.
        final class PacedBody: @unchecked Sendable {
            /// The most bytes read ahead for a reader that holds back: 4 MiB.
            static let readAheadLimit = 4 * 1_048_576
            /// The bytes taken from AsyncHTTPClient after which it must have read the socket again: more than one
            /// wake-up of its channel reads (NIO's 4 reads of at most 64 KiB) gives, and so more than it holds.
            static let readAheadStep = 320 * 1024

            private enum Holder {
                case nobody, reader, keeper
            }

            private struct State {
                var holder = Holder.nobody
                var readAhead = CircularBuffer<ByteBuffer>()
                var readAheadBytes = 0
                /// How the body ended (`nil` while it goes on): its end, or AsyncHTTPClient's error.
                var end: Result<Void, any Error>?
                /// When AsyncHTTPClient last had to read the socket (so its idle timer restarted then, or later).
                var lastSocketRead: NIODeadline
                /// The bytes taken from AsyncHTTPClient since `lastSocketRead`.
                var takenSinceSocketRead = 0
                /// The reader, waiting for the keeper's chunk.
                var waiter: CheckedContinuation<Void, Never>?
                /// Whether the reader waits for the keeper: the keeper then ends its look after the chunk it reads.
                var readerWaits = false
                var keeper: Task<Void, Never>?
                /// Whether the keeper stopped at ``PacedBody/readAheadLimit`` (kept: AsyncHTTPClient's idle timeout
                /// reaches the reader only after the chunks read ahead, by when a new keeper may run).
                var isFull = false
            }

            /// Used only by the task that `state.holder` names.
            private var iterator: HTTPClientResponse.Body.AsyncIterator
            private let state: LockedBox<State>
            /// The idle timeout, when there is one (without one, nothing is read ahead).
            private let idle: TimeAmount?

            init(_ body: HTTPClientResponse.Body, idle: Duration?) {
                self.iterator = body.makeAsyncIterator()
                let idle = idle.map { TimeAmount.nanoseconds(max(80_000_000, Configuration.nanoseconds($0))) }
                self.idle = idle
                // The head came before the reader began: the first look is due a quarter of the timeout from now.
                let start = NIODeadline.now() - .nanoseconds((idle?.nanoseconds ?? 0) / 4)
                self.state = LockedBox(State(lastSocketRead: start))
            }

            deinit {
                readerLeft()
            }

            /// The reader let the body go: the keeper stops (a read it is waiting for is cancelled, which closes the
            /// connection). Without this, a keeper waiting on a quiet stream kept the body, its connection and its
            /// task alive.
            func readerLeft() {
                state.withLock { $0.keeper }?.cancel()
            }

            /// The reader's hold on a body: when the last copy of the reader's iterator goes, the keeper stops, even in
            /// the middle of a read (which holds the body itself).
            final class Reading: Sendable {
                let body: PacedBody

                init(_ body: PacedBody) { self.body = body }

                deinit { body.readerLeft() }
            }

            /// Whether the keeper stopped reading ahead at ``readAheadLimit`` (so an idle timeout is the reader's).
            var stoppedReadingAhead: Bool { state.withLock { $0.isFull } }

            /// The next chunk: read ahead, or from AsyncHTTPClient. A cancelled reader gets `CancellationError`, not
            /// the chunks read ahead for it (as AsyncHTTPClient's own iterator would throw it).
            func next() async throws -> ByteBuffer? {
                try Task.checkCancellation()
                if let idle,
                    state.withLock({ $0.keeper == nil && $0.end == nil && $0.readAheadBytes < Self.readAheadLimit })
                {
                    startKeeper(idle: idle)
                }
                while true {
                    switch takeTurn() {
                    case .chunk(let chunk):
                        return chunk
                    case .end(let end):
                        try end.get()
                        return nil
                    case .waitForKeeper:
                        await waitForKeeper()
                    case .read:
                        return try await read(as: .reader).chunk
                    }
                }
            }

            private enum Turn {
                case chunk(ByteBuffer)
                case end(Result<Void, any Error>)
                case waitForKeeper
                case read
            }

            private func takeTurn() -> Turn {
                state.withLock { state in
                    if let chunk = state.readAhead.popFirst() {
                        state.readerWaits = false
                        state.readAheadBytes -= chunk.readableBytes
                        return .chunk(chunk)
                    }
                    if let end = state.end { return .end(end) }
                    if state.holder == .keeper {
                        state.readerWaits = true
                        return .waitForKeeper
                    }
                    state.readerWaits = false
                    state.holder = .reader
                    return .read
                }
            }

            /// Takes one chunk from AsyncHTTPClient as `holder`, which holds the iterator: the reader gets it, the
            /// keeper puts it in the read-ahead buffer. Returns it, and whether AsyncHTTPClient has read the socket
            /// since the keeper began (``readAheadStep``).
            private func read(as holder: Holder) async throws -> (chunk: ByteBuffer?, readSocket: Bool) {
                let result: Result<ByteBuffer?, any Error>
                do {
                    result = .success(try await iterator.next())
                } catch {
                    result = .failure(error)
                }
                let (waiter, keeper, readSocket) = state.withLock { state in
                    state.holder = .nobody
                    var readSocket = false
                    switch result {
                    case .success(let chunk?):
                        state.takenSinceSocketRead += chunk.readableBytes
                        if state.takenSinceSocketRead >= Self.readAheadStep {
                            state.takenSinceSocketRead = 0
                            state.lastSocketRead = .now()
                            readSocket = true
                        }
                        if holder == .keeper {
                            state.readAheadBytes += chunk.readableBytes
                            state.readAhead.append(chunk)
                        }
                    case .success(nil):
                        state.end = .success(())
                    case .failure(let error):
                        state.end = .failure(error)
                    }
                    let waiter = state.waiter
                    state.waiter = nil
                    return (waiter, state.end == nil ? nil : state.keeper, readSocket)
                }
                waiter?.resume()
                keeper?.cancel()  // the body ended: nothing more to keep
                return (try result.get(), readSocket)
            }

            /// Waits until the keeper's chunk (or the body's end) has arrived; when the reader is cancelled meanwhile,
            /// cancels the keeper's read, which ends the body with `CancellationError`.
            private func waitForKeeper() async {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        let waiting = state.withLock { state -> Bool in
                            guard state.holder == .keeper else { return false }
                            state.waiter = continuation
                            return true
                        }
                        if !waiting { continuation.resume() }
                    }
                } onCancel: {
                    // Only a read of the keeper's that the reader waits for: not a keeper between two looks.
                    state.withLock { $0.holder == .keeper ? $0.keeper : nil }?.cancel()
                }
            }

            /// Starts the keeper, which looks every eighth of the idle timeout, until the body ends, its reader lets
            /// it go (it holds the body weakly, and strongly only while it reads), or the read-ahead is full.
            private func startKeeper(idle: TimeAmount) {
                let keeper = Task { [weak self] in
                    while true {
                        do {
                            try await Task.sleep(for: .nanoseconds(idle.nanoseconds / 8))
                        } catch {
                            return  // cancelled: the body ended or went
                        }
                        guard let body = self else { return }
                        guard await body.keep(idle: idle) else {
                            body.keeperStopped()
                            return
                        }
                    }
                }
                let started = state.withLock { state -> Bool in
                    guard state.keeper == nil, state.end == nil else { return false }
                    state.keeper = keeper
                    return true
                }
                if !started { keeper.cancel() }
            }

            /// One look of the keeper: when half the idle timeout has passed since AsyncHTTPClient last had to read the
            /// socket and the reader is not reading, takes chunks until it must have read it again. Returns whether to
            /// go on looking.
            private func keep(idle: TimeAmount) async -> Bool {
                var due: TimeAmount? = .nanoseconds(idle.nanoseconds / 2)
                while true {
                    switch claimForKeeper(due: due) {
                    case .stop:
                        return false
                    case .wait:
                        return true
                    case .read:
                        guard let (chunk, readSocket) = try? await read(as: .keeper), chunk != nil else { return false }
                        if readSocket { return true }
                        due = nil  // until then, the chunks it holds
                    }
                }
            }

            /// The keeper stopped without the body ending (the read-ahead full): the reader's next `next()` starts
            /// another once it has taken chunks.
            private func keeperStopped() {
                state.withLock { state in
                    if state.end == nil { state.keeper = nil }
                }
            }

            private enum Claim {
                case stop, wait, read
            }

            /// Takes the iterator for the keeper, when nobody holds it, and, with `due`, when that long has passed
            /// since the last read from the socket.
            private func claimForKeeper(due: TimeAmount?) -> Claim {
                state.withLock { state in
                    guard state.end == nil else { return .stop }
                    guard state.holder == .nobody else { return .wait }
                    if let due {
                        guard NIODeadline.now() - state.lastSocketRead >= due else { return .wait }
                        // A look counts only what it takes: what the reader took before may be from the batch
                        // AsyncHTTPClient still holds.
                        state.takenSinceSocketRead = 0
                    } else if state.readerWaits {
                        return .wait  // the reader reads again: the look ends, the reader's reads drain the rest
                    }
                    guard state.readAheadBytes < Self.readAheadLimit else {
                        state.isFull = true
                        return .stop
                    }
                    state.holder = .keeper
                    return .read
                }
            }
        }
    }
#endif
