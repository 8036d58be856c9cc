#if TestServer
    import Logging
    import NIOCore
    import NIOHTTP1

    /// Serves the requests of one connection in order, until either side closes it.
    ///
    /// The same loop serves an HTTP/2 stream, which then carries a single request (see ``HTTP2ResponseTranslator``).
    struct RequestLoop {
        let state: ServerState
        let logger: Logger
        /// `http` or `https`, for the URLs routes echo and redirect to.
        let scheme: String

        func run(_ channel: NIOAsyncChannel<HTTPServerRequestPart, ByteBuffer>) async {
            guard state.track(channel.channel) else {
                // Accepted while shutting down: close it through its async wrapper, which finishes its writer.
                try? await channel.executeThenClose { _, _ in }
                return
            }
            defer { state.untrack(channel.channel) }
            do {
                try await channel.executeThenClose { inbound, _ in
                    let connection = Connection(channel: channel.channel, inbound: inbound, scheme: scheme)
                    requests: while let part = try await connection.nextPart() {
                        guard case .head(let head) = part else { continue }
                        state.countRequest()
                        switch try await serve(head, on: connection) {
                        case .keepAlive: continue
                        case .close:
                            await connection.closeCleanly()
                            break requests
                        case .closed: break requests
                        }
                    }
                    await connection.drain()
                }
            } catch {
                logger.debug("connection ended", metadata: ["error": "\(error)"])
            }
        }

        private func serve(_ head: HTTPRequestHead, on connection: Connection) async throws -> Disposition {
            let (path, _) = URIParts.split(head.uri)
            let routed = Router.route(for: path)
            let custom = state.customRoute(method: head.method.rawValue, path: path)
            let buffersBody = custom != nil || routed?.route.bodyMode != .streamed
            // A body declared larger than the limit is refused before it is sent: no `100 Continue` for it.
            let declared = head.headers["Content-Length"].first.flatMap { Int($0) } ?? 0
            if buffersBody, declared > TestServerRequest.maximumBodySize {
                return try await refuseTooLarge(head, on: connection)
            }
            if head.headers["Expect"].contains(where: { $0.lowercased() == "100-continue" }) {
                try await connection.write("HTTP/1.1 100 Continue\r\n\r\n")
            }
            var body: [UInt8] = []
            if buffersBody {
                guard let buffered = try await connection.readBody(limit: TestServerRequest.maximumBodySize) else {
                    return try await refuseTooLarge(head, on: connection)
                }
                body = buffered
            }
            let context = makeContext(head, body: body, connection: connection, arguments: routed?.arguments ?? [])
            if let custom {
                let response: TestServerResponse
                do {
                    response = try await custom(context.request)
                } catch {
                    response = .text("handler threw: \(error)", status: 500)
                }
                return try await context.respond(response)
            }
            guard let route = routed?.route else {
                return try await context.respond(.text("not found", status: 404))
            }
            return try await route.handle(context)
        }

        /// Answers `413` to a body over ``TestServerRequest/maximumBodySize``, then closes the connection lingering:
        /// the client may still be sending the body, and a close with unread bytes makes the kernel send a reset,
        /// which can destroy the `413` before the client has read it.
        private func refuseTooLarge(_ head: HTTPRequestHead, on connection: Connection) async throws -> Disposition {
            let context = makeContext(head, body: [], connection: connection, arguments: [])
            var response = TestServerResponse.text("request body too large", status: 413)
            if head.version.major == 1, head.isKeepAlive {
                response.headers.append(("Connection", "close"))  // HTTP/2 has no such header
            }
            _ = try await context.respond(response)
            await connection.closeLingering()
            return .closed
        }

        private func makeContext(
            _ head: HTTPRequestHead,
            body: [UInt8],
            connection: Connection,
            arguments: [Substring]
        ) -> RouteContext {
            let request = TestServerRequest(
                method: head.method.rawValue,
                uri: head.uri,
                headers: head.headers.map { ($0.name, $0.value) },
                body: body,
                remoteAddress: connection.remoteAddress
            )
            return RouteContext(
                request: request,
                head: head,
                connection: connection,
                arguments: arguments,
                localPort: connection.channel.localAddress?.port ?? 0
            )
        }
    }
#endif
