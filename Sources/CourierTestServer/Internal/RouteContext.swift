#if TestServer
    import NIOCore
    import NIOHTTP1

    /// Everything a built-in route needs: the request, its connection, and helpers that serialise responses.
    struct RouteContext {
        let request: TestServerRequest
        let head: HTTPRequestHead
        let connection: Connection
        /// The path segments after the route's first one, still percent-encoded: `/status/418` → `["418"]`.
        let arguments: [Substring]
        /// The port the server listens on, for absolute URLs when the request has no `Host`.
        let localPort: Int

        /// Whether the connection stays open after this response; always on HTTP/2, where the stream ends instead.
        var keepAlive: Bool { head.version.major >= 2 || head.isKeepAlive }

        /// `scheme://host` as the client addressed the server.
        var origin: String {
            "\(connection.scheme)://\(request.header("Host") ?? "127.0.0.1:\(localPort)")"
        }

        /// The full URL of the request, as httpbin's `url` field shows it.
        var url: String { origin + request.uri }

        /// The first query value named `name`.
        func query(_ name: String) -> String? {
            request.queryValue(name)
        }

        /// Whether this response's body goes on the wire: not for `HEAD` (RFC 9110 §9.3.2). Routes that write their
        /// body themselves (chunks, drips) write nothing after the head when this is `false`.
        var sendsBody: Bool { request.method != "HEAD" }

        /// Sends `response` with a `Content-Length`; for `HEAD` the body is left out, and a 1xx, 204 or 304 has none
        /// (RFC 9110 §6.4.1: a body there would be read as the start of the next response).
        func respond(_ response: TestServerResponse) async throws -> Disposition {
            var headers = response.headers.filter { !$0.name.caseInsensitiveEquals("Content-Length") }
            if response.status >= 200, response.status != 204 {
                headers.append(("Content-Length", String(response.body.count)))
            }
            let hasBody = sendsBody && response.status >= 200 && response.status != 204 && response.status != 304
            var buffer = connection.channel.allocator.buffer(capacity: 256 + (hasBody ? response.body.count : 0))
            buffer.writeString(headText(status: response.status, headers: headers))
            if hasBody {
                buffer.writeBytes(response.body)
            }
            try await connection.write(buffer)
            return keepAlive ? .keepAlive : .close
        }

        /// Sends `json` as an `application/json` response.
        func json(_ json: JSONValue, status: Int = 200, headers: [(name: String, value: String)] = []) async throws
            -> Disposition
        {
            let response = TestServerResponse(
                status: status,
                headers: [("Content-Type", "application/json")] + headers,
                body: json.bytes
            )
            return try await respond(response)
        }

        /// Sends an empty-bodied response with `status`.
        func status(_ status: Int, headers: [(name: String, value: String)] = []) async throws -> Disposition {
            try await respond(TestServerResponse(status: status, headers: headers))
        }

        /// Status line, `headers` verbatim, the `Connection` header this request needs, and the blank line.
        func headText(status: Int, headers: [(name: String, value: String)]) -> String {
            var text = "HTTP/1.1 \(status) \(Self.reasonPhrase(status))\r\n"
            for (name, value) in headers {
                text += "\(name): \(value)\r\n"
            }
            if !keepAlive {
                text += "Connection: close\r\n"
            } else if head.version.major == 1, head.version.minor == 0 {
                text += "Connection: keep-alive\r\n"
            }
            text += "\r\n"
            return text
        }

        /// Writes a head announcing a chunked body.
        func writeChunkedHead(status: Int = 200, headers: [(name: String, value: String)]) async throws {
            try await connection.write(headText(status: status, headers: headers + [("Transfer-Encoding", "chunked")]))
        }

        /// Writes one chunk of a chunked body (an empty `data` is skipped: it would end the body).
        func writeChunk(_ data: ByteBuffer) async throws {
            guard data.readableBytes > 0, sendsBody else { return }
            try await connection.write(
                connection.channel.allocator.buffer(string: String(data.readableBytes, radix: 16) + "\r\n"))
            try await connection.write(data)
            try await connection.write(connection.channel.allocator.buffer(string: "\r\n"))
        }

        /// Writes the last chunk, ending a chunked body.
        func finishChunked() async throws -> Disposition {
            if sendsBody { try await connection.write("0\r\n\r\n") }
            return keepAlive ? .keepAlive : .close
        }

        static func reasonPhrase(_ status: Int) -> String {
            let phrase = HTTPResponseStatus(statusCode: status).reasonPhrase
            return phrase.isEmpty ? "Unknown" : phrase
        }
    }
#endif
