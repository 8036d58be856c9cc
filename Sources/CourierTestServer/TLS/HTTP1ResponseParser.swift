#if TestServer
    import NIOCore
    import NIOHTTP1

    /// Parses the raw HTTP/1.1 response bytes a route writes back into response parts, for protocols (HTTP/2) that
    /// cannot carry the bytes themselves.
    ///
    /// Handles what the routes write: a status line and headers, then a body framed by `Content-Length`, by
    /// `Transfer-Encoding: chunked` (trailers become the end part's headers), or by nothing (the body runs until the
    /// route closes, see ``finish()``); interim `1xx` heads; no body for `HEAD` requests, `204` and `304`. Framing
    /// that HTTP/1.1 forbids (two different `Content-Length`s, `Content-Length` with `Transfer-Encoding`, a bad chunk
    /// size) throws, and bytes after the end of the response are dropped.
    struct HTTP1ResponseParser {
        /// Why the bytes could not be turned into response parts.
        enum ParseError: Error, Equatable {
            case malformedHead
            case conflictingFraming
            case malformedChunk
            case headTooLarge
        }

        private enum State {
            case head
            case fixed(remaining: Int)
            case chunkSize
            case chunkData(remaining: Int)
            case chunkDataEnd
            case trailers(HTTPHeaders)
            case untilClose
            case done
        }

        /// The largest head accepted, to bound memory (the `header-flood` fault writes a few megabytes).
        static let maximumHeadSize = 64 << 20

        private static let lineEnd: [UInt8] = [13, 10]
        private static let headEnd: [UInt8] = [13, 10, 13, 10]

        /// Whether the request was `HEAD`, whose response has no body whatever its headers say.
        var isHeadRequest = false

        private var state = State.head
        private var pending = ByteBuffer()

        /// Whether a whole response (not counting interim ones) has been parsed.
        var isComplete: Bool {
            if case .done = state { return true }
            return false
        }

        /// Parses `bytes` after what came before, returning every part now complete (body bytes as they arrive).
        mutating func parse(_ bytes: ByteBuffer) throws -> [HTTPServerResponsePart] {
            var bytes = bytes
            pending.writeBuffer(&bytes)
            var parts: [HTTPServerResponsePart] = []
            while let part = try next() {
                parts.append(part)
            }
            if pending.readableBytes == 0 {
                pending.clear()
            } else if pending.readerIndex > 1 << 20 {
                pending.discardReadBytes()
            }
            return parts
        }

        /// The end of a body that runs until the connection closes, when the route closes; otherwise `nil`.
        mutating func finish() -> HTTPServerResponsePart? {
            guard case .untilClose = state else { return nil }
            state = .done
            return .end(nil)
        }

        private mutating func next() throws -> HTTPServerResponsePart? {
            switch state {
            case .head:
                guard let range = pending.readableBytesView.firstRange(of: Self.headEnd) else {
                    guard pending.readableBytes <= Self.maximumHeadSize else { throw ParseError.headTooLarge }
                    return nil
                }
                let length = range.upperBound - pending.readerIndex
                guard let text = pending.readString(length: length) else { throw ParseError.malformedHead }
                return try head(from: text)
            case .fixed(let remaining):
                guard remaining > 0 else {
                    state = .done
                    return .end(nil)
                }
                guard pending.readableBytes > 0,
                    let slice = pending.readSlice(length: min(remaining, pending.readableBytes))
                else { return nil }
                state = .fixed(remaining: remaining - slice.readableBytes)
                return .body(.byteBuffer(slice))
            case .chunkSize:
                guard let line = try readLine() else { return nil }
                let digits = line.prefix { $0 != ";" }.trimmed
                guard let size = Int(digits, radix: 16), size >= 0 else { throw ParseError.malformedChunk }
                state = size == 0 ? .trailers([:]) : .chunkData(remaining: size)
                return try next()
            case .chunkData(let remaining):
                guard pending.readableBytes > 0,
                    let slice = pending.readSlice(length: min(remaining, pending.readableBytes))
                else { return nil }
                let left = remaining - slice.readableBytes
                state = left == 0 ? .chunkDataEnd : .chunkData(remaining: left)
                return .body(.byteBuffer(slice))
            case .chunkDataEnd:
                guard let line = try readLine() else { return nil }
                guard line.isEmpty else { throw ParseError.malformedChunk }
                state = .chunkSize
                return try next()
            case .trailers(var trailers):
                guard let line = try readLine() else { return nil }
                guard !line.isEmpty else {
                    state = .done
                    return .end(trailers.isEmpty ? nil : trailers)
                }
                guard let (name, value) = Self.header(line) else { throw ParseError.malformedChunk }
                trailers.add(name: name, value: value)
                state = .trailers(trailers)
                return try next()
            case .untilClose:
                guard pending.readableBytes > 0, let slice = pending.readSlice(length: pending.readableBytes) else {
                    return nil
                }
                return .body(.byteBuffer(slice))
            case .done:
                pending.moveReaderIndex(forwardBy: pending.readableBytes)
                return nil
            }
        }

        /// Parses a whole head (ending with its blank line) and chooses how the body is framed.
        private mutating func head(from text: String) throws -> HTTPServerResponsePart {
            var lines = text.split(separator: "\r\n", omittingEmptySubsequences: true)[...]
            guard let statusLine = lines.popFirst() else { throw ParseError.malformedHead }
            let fields = statusLine.split(separator: " ", maxSplits: 2)
            guard fields.count >= 2, fields[0].hasPrefix("HTTP/1."), let code = Int(fields[1]),
                (100...999).contains(code)
            else { throw ParseError.malformedHead }
            var headers = HTTPHeaders()
            for line in lines {
                guard let (name, value) = Self.header(Substring(line)) else { throw ParseError.malformedHead }
                headers.add(name: name, value: value)
            }
            let lengths = Set(headers["Content-Length"].flatMap { $0.split(separator: ",") }.map { $0.trimmed })
            let chunked = headers["Transfer-Encoding"].contains { $0.lowercased().contains("chunked") }
            guard lengths.count <= 1, !(chunked && !lengths.isEmpty) else { throw ParseError.conflictingFraming }
            var length: Int?
            if let text = lengths.first {
                guard let value = Int(text), value >= 0 else { throw ParseError.malformedHead }
                length = value
                headers.replaceOrAdd(name: "Content-Length", value: text)
            }
            headers.remove(name: "Transfer-Encoding")
            if code < 200 {
                state = .head
            } else if isHeadRequest || code == 204 || code == 304 {
                state = .fixed(remaining: 0)
            } else if chunked {
                state = .chunkSize
            } else if let length {
                state = .fixed(remaining: length)
            } else {
                state = .untilClose
            }
            return .head(
                HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: code), headers: headers))
        }

        /// The next CRLF-terminated line without its CRLF, or `nil` when it has not fully arrived.
        private mutating func readLine() throws -> Substring? {
            guard let range = pending.readableBytesView.firstRange(of: Self.lineEnd) else {
                guard pending.readableBytes <= Self.maximumHeadSize else { throw ParseError.headTooLarge }
                return nil
            }
            let text = pending.readString(length: range.lowerBound - pending.readerIndex) ?? ""
            pending.moveReaderIndex(forwardBy: 2)
            return Substring(text)
        }

        private static func header(_ line: Substring) -> (name: String, value: String)? {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmed)
        }
    }

    extension Substring {
        /// Without leading and trailing spaces and tabs.
        fileprivate var trimmed: String {
            String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
        }
    }
#endif
