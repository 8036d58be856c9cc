#if TestServer
    import NIOCore
    import NIOHTTP1
    import NIOHTTP2
    import NIOSSL

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// What a route leaves the connection in once it is done.
    enum Disposition {
        /// Ready for the next request.
        case keepAlive
        /// Close the connection cleanly (FIN) once every write has reached the socket.
        case close
        /// The route already closed or reset the connection.
        case closed
    }

    /// One accepted connection: the decoded request parts coming in, raw bytes going out.
    ///
    /// Responses are written as raw `ByteBuffer`s straight onto the channel (there is no response encoder in the
    /// pipeline), which is what lets the fault routes send framing NIO's encoder would refuse. Writes are bounded:
    /// at most ``Connection/maximumBytesInFlight`` are queued before the connection waits for the socket to drain.
    /// Used from one task only.
    final class Connection {
        /// The most bytes queued on the channel before `write` waits for the socket.
        static let maximumBytesInFlight = 512 * 1024

        let channel: any Channel
        let remoteAddress: String
        /// `http` or `https`.
        let scheme: String
        private var inbound: NIOAsyncChannelInboundStream<HTTPServerRequestPart>.AsyncIterator
        private var lastWrite: EventLoopFuture<Void>?
        private var batchBoundary: EventLoopFuture<Void>?
        private var bytesSinceBoundary = 0

        init(channel: any Channel, inbound: NIOAsyncChannelInboundStream<HTTPServerRequestPart>, scheme: String) {
            self.channel = channel
            self.scheme = scheme
            self.inbound = inbound.makeAsyncIterator()
            self.remoteAddress = channel.remoteAddress?.ipAddress ?? "127.0.0.1"
        }

        /// The next decoded request part, or `nil` once the client has closed.
        func nextPart() async throws -> HTTPServerRequestPart? {
            try await inbound.next()
        }

        /// Reads the rest of the current request's body; `nil` when it exceeds `limit` (the rest is left unread).
        func readBody(limit: Int) async throws -> [UInt8]? {
            var body: [UInt8] = []
            while let part = try await nextPart() {
                switch part {
                case .head: return body  // cannot happen with a well-behaved decoder
                case .body(let buffer):
                    guard body.count + buffer.readableBytes <= limit else { return nil }
                    body.append(contentsOf: buffer.readableBytesView)
                case .end: return body
                }
            }
            return body
        }

        /// Reads and discards the rest of the current request's body, returning its length.
        func countBody() async throws -> Int {
            var count = 0
            while let part = try await nextPart() {
                switch part {
                case .head: return count
                case .body(let buffer): count += buffer.readableBytes
                case .end: return count
                }
            }
            return count
        }

        /// Waits until the client closes the connection (or it fails), discarding anything it sends.
        func waitForClientClose() async {
            do {
                while try await nextPart() != nil {}
            } catch {
                // A read error means the connection is gone, which is what we were waiting for.
            }
        }

        /// Queues `buffer` for the socket, waiting first if too much is already queued.
        func write(_ buffer: ByteBuffer) async throws {
            let promise = channel.eventLoop.makePromise(of: Void.self)
            channel.writeAndFlush(buffer, promise: promise)
            let future = promise.futureResult
            lastWrite = future
            bytesSinceBoundary += buffer.readableBytes
            if bytesSinceBoundary >= Self.maximumBytesInFlight {
                // Keep one batch in flight: wait for the previous batch, then start counting the next one.
                try await batchBoundary?.get()
                batchBoundary = future
                bytesSinceBoundary = 0
            }
        }

        /// Queues `bytes` for the socket.
        func write(_ bytes: some Sequence<UInt8>) async throws {
            try await write(channel.allocator.buffer(bytes: bytes))
        }

        /// Queues `text` for the socket.
        func write(_ text: String) async throws {
            try await write(channel.allocator.buffer(string: text))
        }

        /// Waits until every queued write has reached the socket (or failed).
        func drain() async {
            _ = try? await lastWrite?.get()
            lastWrite = nil
            batchBoundary = nil
            bytesSinceBoundary = 0
        }

        /// Waits for queued writes, then closes with a FIN.
        func closeCleanly() async {
            await drain()
            _ = try? await channel.close().get()
        }

        /// ``closeCleanly()`` of the whole TCP connection, also over HTTP/2 (`http2`), where it closes the stream's
        /// parent rather than the stream.
        func closeConnectionCleanly(http2: Bool) async {
            await drain()
            _ = try? await transportChannel(http2: http2).close().get()
        }

        /// Waits for queued writes, then reads and discards what the client still sends until it closes, or for at
        /// most `limit`, and closes: the lingering close of nginx and Apache. Closing at once with unread bytes
        /// makes the kernel answer with a reset, and a reset can destroy a response the client has not read yet.
        func closeLingering(for limit: TimeAmount = .seconds(2)) async {
            await drain()
            let channel = self.channel
            let deadline = channel.eventLoop.scheduleTask(in: limit) { channel.close(promise: nil) }
            while (try? await nextPart()) != nil {}
            deadline.cancel()
            _ = try? await channel.close().get()
        }

        /// Waits for queued writes, then closes with a FIN but, over TLS, without TLS's `close_notify` first (the TLS
        /// handler is taken out of the pipeline): the peer sees an unclean TLS shutdown, as when a load balancer or a
        /// crashing server drops the connection. Over plain HTTP the same as ``closeCleanly()``.
        func closeWithoutCloseNotify() async {
            await drain()
            await removeTLS()
            _ = try? await channel.close().get()
        }

        /// Takes the TLS handler out of the pipeline, so that a close sends no `close_notify` (and does not wait for
        /// the peer's); nothing over plain HTTP.
        private func removeTLS() async {
            let channel = self.channel
            // On the event loop, where the handler (not `Sendable`) may be touched.
            let removed = channel.eventLoop.flatSubmit { () -> EventLoopFuture<Void> in
                let pipeline = channel.pipeline.syncOperations
                guard let tls = try? pipeline.handler(type: NIOSSLServerHandler.self) else {
                    return channel.eventLoop.makeSucceededVoidFuture()
                }
                return pipeline.removeHandler(tls)
            }
            _ = try? await removed.get()
        }

        /// Waits for queued writes, then resets the HTTP/2 stream this connection stands for with a `RST_STREAM`
        /// carrying `code`; the HTTP/2 connection stays open. Only for HTTP/2 streams (see ``HTTP2StreamResetter``).
        func resetStream(_ code: HTTP2ErrorCode) async {
            await drain()
            _ = try? await channel.triggerUserOutboundEvent(HTTP2StreamResetter.Reset(code: code)).get()
        }

        /// Waits for queued writes, then closes with a TCP RST (`SO_LINGER` 0 then close). Over TLS too: the TLS handler
        /// goes first, which would otherwise send `close_notify` and end the connection cleanly instead.
        func reset() async {
            await drain()
            await removeTLS()
            if let provider = channel as? any SocketOptionProvider {
                _ = try? await provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
            }
            _ = try? await channel.close().get()
        }

        /// The TCP connection the request came on: over HTTP/2 (`http2`) its stream's parent, else ``channel`` (whose
        /// parent is the listening socket).
        func transportChannel(http2: Bool) -> any Channel { http2 ? channel.parent ?? channel : channel }

        /// ``reset()`` of the whole TCP connection, also over HTTP/2 (where ``reset()`` ends the stream alone).
        func resetConnection(http2: Bool) async {
            guard http2, let parent = channel.parent else { return await reset() }
            await drain()
            if let provider = parent as? any SocketOptionProvider {
                _ = try? await provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
            }
            _ = try? await parent.close().get()
        }
    }
#endif
