#if TestServer
    import Foundation
    import NIOCore

    /// Byte-producing and byte-consuming routes: `/bytes/{n}`, `/stream-bytes/{n}`, `/range/{n}`, `/drip`, `/upload`,
    /// `/trailers/{n}`.
    enum StreamingRoutes {
        /// The most `/bytes/{n}` and `/range/{n}` serve (they are buffered): 64 MiB.
        static let maximumBufferedSize = 64 * 1024 * 1024

        static func handle(_ name: Substring, _ context: RouteContext) async throws -> Disposition {
            switch name {
            case "bytes":
                guard let count = sizeArgument(context, maximum: maximumBufferedSize) else {
                    return try await bad(context)
                }
                var random = SeededRandom(seedText: context.query("seed"))
                let body = random.bytes(count)
                return try await context.respond(
                    TestServerResponse(headers: [("Content-Type", "application/octet-stream")], body: body)
                )
            case "stream-bytes":
                return try await streamBytes(context)
            case "range":
                return try await range(context)
            case "drip":
                return try await drip(context)
            case "trailers":
                return try await trailers(context)
            default:
                let count = try await context.connection.countBody()
                return try await context.json(["bytes": .int(Int64(count))])
            }
        }

        private static func sizeArgument(_ context: RouteContext, maximum: Int) -> Int? {
            guard let count = context.arguments.first.flatMap({ Int($0) }), (0...maximum).contains(count) else {
                return nil
            }
            return count
        }

        private static func bad(_ context: RouteContext) async throws -> Disposition {
            try await context.respond(.text("invalid size", status: 400))
        }

        /// `/stream-bytes/{n}?seed=&chunk_size=`: `n` pseudo-random bytes, chunked, in bounded memory.
        ///
        /// A 64 KiB (or `chunk_size`, when larger) random pattern is generated once and its slices are sent over and
        /// over, so even `n` = 1 GiB costs no more memory or CPU than the socket needs.
        private static func streamBytes(_ context: RouteContext) async throws -> Disposition {
            guard let total = sizeArgument(context, maximum: Int(Int32.max) * 8) else { return try await bad(context) }
            let chunkSize = min(max(context.query("chunk_size").flatMap { Int($0) } ?? 10 * 1024, 1), 1024 * 1024)
            let patternSize = max(chunkSize, 64 * 1024)
            var random = SeededRandom(seedText: context.query("seed"))
            let pattern = random.bytes(patternSize)
            var doubled = context.connection.channel.allocator.buffer(capacity: patternSize * 2)
            doubled.writeBytes(pattern)
            doubled.writeBytes(pattern)

            try await context.writeChunkedHead(headers: [("Content-Type", "application/octet-stream")])
            guard context.sendsBody else { return try await context.finishChunked() }
            var sent = 0
            var batch = context.connection.channel.allocator.buffer(capacity: 0)
            while sent < total {
                let length = min(chunkSize, total - sent)
                guard let slice = doubled.getSlice(at: sent % patternSize, length: length) else { break }
                if batch.readableBytes == 0 {
                    batch = context.connection.channel.allocator.buffer(capacity: min(total - sent, 64 * 1024) + 64)
                }
                batch.writeString(String(length, radix: 16) + "\r\n")
                batch.writeImmutableBuffer(slice)
                batch.writeString("\r\n")
                sent += length
                if batch.readableBytes >= 64 * 1024 || sent == total {
                    try await context.connection.write(batch)
                    batch.clear()
                }
            }
            return try await context.finishChunked()
        }

        /// `/range/{n}`: `n` bytes of `abc…z` repeated, honouring one `Range: bytes=a-b` with `206`/`416`.
        private static func range(_ context: RouteContext) async throws -> Disposition {
            guard let total = sizeArgument(context, maximum: maximumBufferedSize) else { return try await bad(context) }
            let alphabet = Array("abcdefghijklmnopqrstuvwxyz".utf8)
            var headers: [(name: String, value: String)] = [
                ("Content-Type", "application/octet-stream"), ("Accept-Ranges", "bytes"), ("ETag", "range\(total)"),
            ]
            // A unit other than bytes is ignored (RFC 9110 §14.2: a server MUST ignore a unit it does not know).
            let byteRange = context.request.header("Range").flatMap { $0.lowercased().hasPrefix("bytes=") ? $0 : nil }
            guard let rangeHeader = byteRange else {
                let body = (0..<total).map { alphabet[$0 % 26] }
                return try await context.respond(TestServerResponse(headers: headers, body: body))
            }
            guard let (first, last) = parseRange(rangeHeader, total: total) else {
                headers.append(("Content-Range", "bytes */\(total)"))
                return try await context.respond(TestServerResponse(status: 416, headers: headers))
            }
            headers.append(("Content-Range", "bytes \(first)-\(last)/\(total)"))
            let body = (first...last).map { alphabet[$0 % 26] }
            return try await context.respond(TestServerResponse(status: 206, headers: headers, body: body))
        }

        /// `bytes=a-b`, `bytes=a-` or `bytes=-n` within `total`, as an inclusive range; `nil` when unsatisfiable.
        static func parseRange(_ header: String, total: Int) -> (Int, Int)? {
            guard header.lowercased().hasPrefix("bytes="), total > 0 else { return nil }
            let spec = header.dropFirst("bytes=".count).split(separator: ",").first ?? ""
            let bounds = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard bounds.count == 2 else { return nil }
            let start = Int(bounds[0].trimmingCharacters(in: .whitespaces))
            let end = Int(bounds[1].trimmingCharacters(in: .whitespaces))
            switch (start, end) {
            case (let start?, let end?) where start <= end && start < total: return (start, min(end, total - 1))
            case (let start?, nil) where start < total: return (start, total - 1)
            case (nil, let suffix?) where suffix > 0: return (max(total - suffix, 0), total - 1)
            default: return nil
            }
        }

        /// `/trailers/{n}?fields=2`: `n` bytes of `abc…z` repeated, chunked (in up to 4 chunks), then `fields` trailer
        /// fields (`X-Trailer-1: value-1`, …, 1 to 16) and `X-Body-Length: n`, all announced by a `Trailer` header.
        ///
        /// Over HTTP/2 the trailers are a trailing `HEADERS` frame with `END_STREAM`.
        private static func trailers(_ context: RouteContext) async throws -> Disposition {
            guard let total = sizeArgument(context, maximum: maximumBufferedSize) else { return try await bad(context) }
            let fields = min(max(context.query("fields").flatMap { Int($0) } ?? 2, 1), 16)
            let trailers = (1...fields).map { ("X-Trailer-\($0)", "value-\($0)") } + [("X-Body-Length", String(total))]
            let announced = trailers.map(\.0).joined(separator: ", ")
            try await context.writeChunkedHead(headers: [
                ("Content-Type", "application/octet-stream"), ("Trailer", announced),
            ])
            let alphabet = Array("abcdefghijklmnopqrstuvwxyz".utf8)
            let body = (0..<total).map { alphabet[$0 % 26] }
            let chunkSize = max(1, (total + 3) / 4)
            for start in stride(from: 0, to: total, by: chunkSize) {
                let chunk = body[start..<min(start + chunkSize, total)]
                try await context.writeChunk(context.connection.channel.allocator.buffer(bytes: chunk))
            }
            if context.sendsBody {
                try await context.connection.write(
                    "0\r\n" + trailers.map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n")
            }
            return context.keepAlive ? .keepAlive : .close
        }

        /// `/drip?duration=2&numbytes=10&code=200&delay=0`: `numbytes` asterisks spread over `duration` seconds.
        private static func drip(_ context: RouteContext) async throws -> Disposition {
            let duration = FaultRoutes.seconds(
                context.query("duration").flatMap { Double($0) }, fallback: 2, maximum: 600)
            let count = context.query("numbytes").flatMap { Int($0) } ?? 10
            let code = context.query("code").flatMap { Int($0) } ?? 200
            let delay = FaultRoutes.seconds(context.query("delay").flatMap { Double($0) }, fallback: 0, maximum: 60)
            guard count > 0, count <= 10 * 1024 * 1024, (100..<600).contains(code) else {
                return try await context.respond(.text("number of bytes must be positive", status: 400))
            }
            guard code >= 200 else {
                // An interim status is not a response (as `/status` refuses it).
                return try await context.respond(.text("a 1xx status cannot end a response", status: 400))
            }
            try await Task.sleep(for: .milliseconds(Int(min(delay, 60) * 1000)))
            // 204 and 304 have no body (RFC 9110 §15.3.5, §15.4.5), and a 204 no Content-Length.
            let hasBody = code != 204 && code != 304
            var headers = [("Content-Type", "application/octet-stream")]
            if code != 204 { headers.append(("Content-Length", String(count))) }
            try await context.connection.write(context.headText(status: code, headers: headers))
            guard context.sendsBody, hasBody else { return context.keepAlive ? .keepAlive : .close }
            let pause = Duration.milliseconds(Int(min(duration, 600) * 1000)) / count
            for index in 0..<count {
                try await context.connection.write("*")
                if index < count - 1 {
                    try await Task.sleep(for: pause)
                }
            }
            return context.keepAlive ? .keepAlive : .close
        }
    }
#endif
