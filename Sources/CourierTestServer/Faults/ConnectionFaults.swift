#if TestServer
    import NIOCore
    import NIOHTTP1
    import NIOHTTP2

    /// Faults at the connection level: the bytes are well-formed, the connection's behaviour is not.
    ///
    /// - `reset-mid-body?announce=100&send=9`: `Content-Length: announce`, `send` bytes, then a TCP RST (with
    ///   `max_age=60`, the head says `Cache-Control: max-age=60`, so a cache would keep it if it kept cut bodies).
    /// - `truncate?announce=100&send=9`: the same, then a clean FIN.
    /// - `truncate-unclean?announce=100&send=9`: the same, then a FIN without TLS's `close_notify` (an unclean TLS
    ///   shutdown); over plain HTTP, `truncate`. With `announce=none`, no `Content-Length`: a body that ends with
    ///   the connection, which only `close_notify` tells whole from cut.
    /// - `chunked-truncated`: a chunked body with no last chunk, then FIN.
    /// - `stall-after-headers`: the head (announcing 100 bytes) and then nothing until the client closes.
    /// - `never-answer`: reads the request and never responds, until the client closes.
    /// - `drip?bytes=10&interval_ms=100`: `Content-Length: bytes`, one byte per interval.
    /// - `close-idle-after-response`: a keep-alive response, then a quiet FIN (a stale pooled connection).
    /// - `reset-on-request` / `close-on-request`: no response at all, a RST or a FIN instead.
    /// - `reset-if-reused`: the first request on a connection gets a keep-alive answer; a later request on the same
    ///   connection gets a RST instead (a pooled connection that died while idle, found out only when reused).
    /// - `reset-stream?code=internal_error`: over HTTP/2, a `RST_STREAM` with `code` (`no_error`, `protocol_error`,
    ///   `internal_error`, `refused_stream`, `cancel`, `enhance_your_calm`, or a number; `internal_error` when absent
    ///   or unknown) instead of a response, while the connection and its other streams go on; with `announce=100&send=9`,
    ///   after a head announcing `announce` bytes and `send` of them. Over HTTP/1.1 the same, with a TCP RST.
    enum ConnectionFaults {
        /// The HTTP/2 error codes `reset-stream` takes by name.
        private static let http2ErrorCodes: [String: HTTP2ErrorCode] = [
            "no_error": .noError, "protocol_error": .protocolError, "internal_error": .internalError,
            "refused_stream": .refusedStream, "cancel": .cancel, "enhance_your_calm": .enhanceYourCalm,
        ]

        /// The connections that answered `reset-if-reused` once.
        private static let remembered = LockedBox(Set<ObjectIdentifier>())

        static func handle(_ name: Substring, _ context: RouteContext) async throws -> Disposition {
            let connection = context.connection
            switch name {
            case "reset-mid-body", "truncate", "truncate-unclean":
                let closeDelimited = context.query("announce") == "none"
                let announce =
                    closeDelimited
                    ? Int(Int32.max) : FaultRoutes.integer(context, "announce", 100, in: 0...Int(Int32.max))
                let send = FaultRoutes.integer(context, "send", 9, in: 0...max(announce, 0))
                var headers = [("Content-Type", "application/octet-stream")]
                if !closeDelimited { headers.append(("Content-Length", String(announce))) }
                if let maxAge = context.query("max_age").flatMap(Int.init) {
                    headers.append(("Cache-Control", "max-age=\(maxAge)"))
                }
                var buffer = connection.channel.allocator.buffer(
                    string: context.headText(status: 200, headers: headers))
                buffer.writeRepeatingByte(UInt8(ascii: "x"), count: send)
                try await connection.write(buffer)
                if name == "truncate" {
                    await connection.closeCleanly()
                } else if name == "truncate-unclean" {
                    await connection.closeWithoutCloseNotify()
                } else {
                    await connection.reset()
                }
                return .closed
            case "chunked-truncated":
                try await context.writeChunkedHead(headers: [("Content-Type", "text/plain")])
                try await context.writeChunk(connection.channel.allocator.buffer(string: "partial body, "))
                try await context.writeChunk(connection.channel.allocator.buffer(string: "and then nothing"))
                await connection.closeCleanly()
                return .closed
            case "stall-after-headers":
                let headers = [("Content-Type", "application/octet-stream"), ("Content-Length", "100")]
                try await connection.write(context.headText(status: 200, headers: headers))
                await connection.drain()
                await connection.waitForClientClose()
                return .closed
            case "never-answer":
                await connection.waitForClientClose()
                return .closed
            case "drip":
                let count = FaultRoutes.integer(context, "bytes", 10, in: 0...1_000_000)
                let interval = FaultRoutes.integer(context, "interval_ms", 100, in: 0...60_000)
                let headers = [("Content-Type", "application/octet-stream"), ("Content-Length", String(count))]
                try await connection.write(context.headText(status: 200, headers: headers))
                guard context.sendsBody else { return context.keepAlive ? .keepAlive : .close }  // a HEAD
                for _ in 0..<count {
                    try await Task.sleep(for: .milliseconds(interval))
                    try await connection.write("*")
                }
                return context.keepAlive ? .keepAlive : .close
            case "close-idle-after-response":
                _ = try await context.json(["closing": true])
                // Over HTTP/2, the connection, not the stream that has just ended.
                await connection.closeConnectionCleanly(http2: context.head.version.major >= 2)
                return .closed
            case "reset-stream":
                if let announce = context.query("announce").flatMap(Int.init), announce >= 0 {
                    let send = FaultRoutes.integer(context, "send", 0, in: 0...announce)
                    let headers = [("Content-Type", "application/octet-stream"), ("Content-Length", String(announce))]
                    var buffer = connection.channel.allocator.buffer(
                        string: context.headText(status: 200, headers: headers))
                    buffer.writeRepeatingByte(UInt8(ascii: "x"), count: send)
                    try await connection.write(buffer)
                }
                guard context.head.version.major >= 2 else {
                    await connection.reset()
                    return .closed
                }
                let name = context.query("code")?.lowercased() ?? ""
                let code = http2ErrorCodes[name] ?? Int(name).map { HTTP2ErrorCode(networkCode: $0) } ?? .internalError
                await connection.resetStream(code)
                return .closed
            case "reset-on-request":
                await connection.reset()
                return .closed
            case "reset-if-reused":
                // The TCP connection's identity: over HTTP/2 each request has a stream channel of its own.
                let http2 = context.head.version.major >= 2
                let transport = connection.transportChannel(http2: http2)
                let id = ObjectIdentifier(transport)
                let reused = remembered.withLock { $0.remove(id) != nil }
                if reused {
                    await connection.resetConnection(http2: http2)
                    return .closed
                }
                remembered.withLock { _ = $0.insert(id) }
                transport.closeFuture.whenComplete { _ in remembered.withLock { _ = $0.remove(id) } }
                return try await context.json(["connection": "remembered"])
            default:
                await connection.closeCleanly()
                return .closed
            }
        }
    }
#endif
