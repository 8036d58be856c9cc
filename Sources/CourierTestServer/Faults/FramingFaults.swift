#if TestServer
    import NIOCore

    /// Faults in the response framing and size, written as raw bytes because NIO's encoder would refuse them.
    ///
    /// - `duplicate-content-length`: `Content-Length: 5` and `Content-Length: 6`.
    /// - `content-length-and-chunked`: `Content-Length` together with `Transfer-Encoding: chunked`.
    /// - `gzip-bomb?size=209715200`: a gzip body (about `size / 1030` bytes) that inflates to `size` zeros.
    /// - `stacked-encodings?count=6`: the body gzipped `count` times, `Content-Encoding: gzip` repeated over several
    ///   header lines.
    /// - `corrupt-gzip`: `Content-Encoding: gzip` on a body whose DEFLATE data is invalid (a reserved block type);
    ///   `corrupt-gzip?cut=1`: a valid gzip member cut before its end, framed correctly (`Content-Length`).
    /// - `empty-gzip`: `Content-Encoding: gzip` on an empty body (`Content-Length: 0`), kept alive; `?status=` sets
    ///   the status (a 304 or 204 has no body anyway).
    /// - `header-flood?count=100000`: that many header lines. `huge-header?size=1048576`: one header that long.
    /// - `extra-response`: a valid response, then an unsolicited second one on the same connection.
    enum FramingFaults {
        static func handle(_ name: Substring, _ context: RouteContext) async throws -> Disposition {
            let connection = context.connection
            switch name {
            case "duplicate-content-length":
                try await connection.write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!")
                await connection.closeCleanly()
                return .closed
            case "content-length-and-chunked":
                let head = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
                try await connection.write(head + "5\r\nhello\r\n0\r\n\r\n")
                await connection.closeCleanly()
                return .closed
            case "gzip-bomb":
                let size = FaultRoutes.integer(context, "size", 200 * 1024 * 1024, in: 0...(16 << 30))
                let headers = [("Content-Type", "application/octet-stream"), ("Content-Encoding", "gzip")]
                let body = DeflateEncoder.gzipOfZeros(size: size)
                return try await context.respond(TestServerResponse(headers: headers, body: body))
            case "stacked-encodings":
                let count = FaultRoutes.integer(context, "count", 6, in: 1...64)
                var body = Array("{\"stacked\": \(count)}\n".utf8)
                for _ in 0..<count {
                    body = DeflateEncoder.gzip(body)
                }
                // Two encodings per line, so the chain spans several header lines.
                var headers = [("Content-Type", "application/json")]
                for line in stride(from: 0, to: count, by: 2) {
                    headers.append(("Content-Encoding", line + 1 < count ? "gzip, gzip" : "gzip"))
                }
                return try await context.respond(TestServerResponse(headers: headers, body: body))
            case "corrupt-gzip":
                var body = DeflateEncoder.gzip(Array("{\"corrupt\": true}\n".utf8))
                if context.query("cut") != nil {
                    body.removeLast(12)  // the trailer and the end of the stored block
                } else {
                    body[10] = 0x07  // BFINAL 1, BTYPE 11: reserved, an invalid block
                }
                let headers = [("Content-Type", "application/json"), ("Content-Encoding", "gzip")]
                return try await context.respond(TestServerResponse(headers: headers, body: body))
            case "empty-gzip":
                let status = FaultRoutes.integer(context, "status", 200, in: 200...599)
                let headers = [("Content-Type", "application/json"), ("Content-Encoding", "gzip")]
                return try await context.respond(TestServerResponse(status: status, headers: headers, body: []))
            case "header-flood":
                let count = FaultRoutes.integer(context, "count", 100_000, in: 0...10_000_000)
                var buffer = connection.channel.allocator.buffer(capacity: count * 24 + 64)
                buffer.writeString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n")
                for index in 0..<count {
                    buffer.writeString("X-Flood-\(index): flood\r\n")
                }
                buffer.writeString("\r\nok")
                try await connection.write(buffer)
                await connection.closeCleanly()
                return .closed
            case "huge-header":
                let size = FaultRoutes.integer(context, "size", 1 << 20, in: 0...(256 << 20))
                var buffer = connection.channel.allocator.buffer(capacity: size + 128)
                buffer.writeString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Huge: ")
                buffer.writeRepeatingByte(UInt8(ascii: "a"), count: size)
                buffer.writeString("\r\n\r\nok")
                try await connection.write(buffer)
                await connection.closeCleanly()
                return .closed
            default:
                let first = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nfirst"
                let second = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 8\r\n\r\nsmuggled"
                try await connection.write(first + second)
                return context.keepAlive ? .keepAlive : .close
            }
        }
    }
#endif
