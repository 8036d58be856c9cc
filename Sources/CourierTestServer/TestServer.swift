#if TestServer
    public import Foundation
    public import Logging
    import NIOCore
    import NIOHTTP1
    import NIOPosix

    /// An in-process HTTP/1.1 server on loopback with httpbin-compatible routes and scriptable faults, over plain
    /// HTTP or over TLS with HTTP/1.1 and HTTP/2.
    ///
    /// The server binds `127.0.0.1` on an ephemeral port, serves any number of concurrent keep-alive connections on
    /// NIO's shared event loops, and answers httpbin 0.10's routes (`/get`, `/post`, `/anything`, `/status/{code}`,
    /// `/redirect/{n}`, `/stream-bytes/{n}`, `/gzip`, …) with the same JSON shapes, plus `/upload`, which counts a
    /// streamed body of any size, `/trailers/{n}`, which ends a chunked body with trailer fields, the live streams
    /// `/sse` (Server-Sent Events that resume after `Last-Event-ID`, drop, pad, hold for `/sse-release/{name}`),
    /// `/ndjson` and `/completion` (an LLM-style token stream), and the fault routes
    /// under `/fault/` (truncated bodies, resets, HTTP/2 stream resets, stalls, conflicting framing, gzip bombs, header
    /// floods, redirect loops), so that any client, curl included, can provoke them.
    ///
    /// ```swift
    /// let server = try await TestServer.start()
    /// do {
    ///     let url = server.baseURL.appending(path: "fault/truncate")
    ///     // … the test …
    ///     try await server.shutdown()
    /// } catch {
    ///     try await server.shutdown()
    ///     throw error
    /// }
    /// ```
    ///
    /// With a ``TestServerTLS`` the same routes are served over HTTPS, with certificates from a
    /// ``TestCertificateAuthority`` made at run time, over HTTP/2 or HTTP/1.1 as ALPN decides (see
    /// ``start(host:port:logger:tls:)``).
    ///
    /// Call ``shutdown()`` when done: it closes every connection, including stalled ones.
    public final class TestServer: Sendable {
        /// The port the server listens on.
        public let port: Int

        /// `http://127.0.0.1:<port>`, or with TLS `https://localhost:<port>` (`https://[::1]:<port>` when bound to
        /// `::1`), so that a client's hostname check has a name to check.
        public let baseURL: URL

        /// The leaf certificate the server presents in its TLS handshakes; `nil` without TLS.
        ///
        /// Its ``TestCertificate/spkiSHA256Base64`` is the pin a client pinning the leaf expects.
        public let presentedCertificate: TestCertificate?

        private let state: ServerState
        private let serverChannel: any Channel
        private let acceptTask: Task<Void, Never>

        init(
            port: Int,
            baseURL: URL,
            presentedCertificate: TestCertificate?,
            state: ServerState,
            serverChannel: any Channel,
            acceptTask: Task<Void, Never>
        ) {
            self.port = port
            self.baseURL = baseURL
            self.presentedCertificate = presentedCertificate
            self.state = state
            self.serverChannel = serverChannel
            self.acceptTask = acceptTask
        }

        /// Starts a server listening on loopback, over plain HTTP/1.1 or, with `tls`, over HTTPS.
        ///
        /// With `tls`, every connection starts with a TLS handshake presenting the certificates of
        /// ``TestServerTLS/mode``; ALPN then picks HTTP/2 (`h2`) or HTTP/1.1 among
        /// ``TestServerTLS/applicationProtocols`` (HTTP/1.1 when the client offers none). Each HTTP/2 stream is
        /// served by the same routes as an HTTP/1.1 request (see ``requestCount``). A failed handshake closes the
        /// connection and is otherwise ignored.
        ///
        /// ```swift
        /// let authority = try TestCertificateAuthority()
        /// let server = try await TestServer.start(tls: TestServerTLS(authority: authority))
        /// // server.baseURL is https://localhost:<port>; trust authority.root in the client
        /// ```
        ///
        /// - Parameters:
        ///   - host: The address to bind. Only loopback addresses (`127.0.0.1`, `::1`, `localhost`) are accepted.
        ///   - port: The port; `0` (the default) picks a free ephemeral port, which ``port`` then reports.
        ///   - logger: Where connection-level events go at debug level; silent when `nil`.
        ///   - tls: How to speak TLS; plain HTTP when `nil` (the default).
        /// - Returns: The running server.
        /// - Throws: ``TestServerError/nonLoopbackHost(_:)`` for any other host, NIOSSL's error when the TLS context
        ///   cannot be built, or NIO's error when binding fails.
        public static func start(
            host: String = "127.0.0.1",
            port: Int = 0,
            logger: Logger? = nil,
            tls: TestServerTLS? = nil
        ) async throws -> TestServer {
            guard ["127.0.0.1", "::1", "localhost"].contains(host) else {
                throw TestServerError.nonLoopbackHost(host)
            }
            let logger = logger ?? Logger(label: "CourierTestServer", factory: { _ in SwiftLogNoOpLogHandler() })
            if let tls {
                return try await startTLS(host: host, port: port, logger: logger, tls: tls)
            }
            let state = ServerState()
            let server = try await bootstrap()
                .bind(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        state.accept(channel)
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
                        let wrapper = try NIOAsyncChannel<HTTPServerRequestPart, ByteBuffer>(
                            wrappingChannelSynchronously: channel
                        )
                        state.retainUntilClosed(wrapper, channel: channel)
                        return wrapper
                    }
                }
            let loop = RequestLoop(state: state, logger: logger, scheme: "http")
            let acceptTask = Task {
                // The connections in flight when the accept loop ends are served to their end.
                _ = try? await withConnectionTasks { start in
                    do {
                        try await server.executeThenClose { connections in
                            for try await connection in connections {
                                start { await loop.run(connection) }
                            }
                        }
                    } catch {
                        logger.debug("accept loop ended", metadata: ["error": "\(error)"])
                    }
                }
            }
            let boundPort = server.channel.localAddress?.port ?? port
            logger.debug("listening", metadata: ["port": "\(boundPort)"])
            // The address bound, not a fixed 127.0.0.1: `::1`, or `localhost` where it resolves to `::1` first.
            var urlHost = server.channel.localAddress?.ipAddress ?? "127.0.0.1"
            if urlHost.contains(":") { urlHost = "[\(urlHost)]" }
            return TestServer(
                port: boundPort,
                baseURL: URL(string: "http://\(urlHost):\(boundPort)") ?? URL(fileURLWithPath: "/"),
                presentedCertificate: nil,
                state: state,
                serverChannel: server.channel,
                acceptTask: acceptTask
            )
        }

        /// A server bootstrap with the options every listener uses.
        static func bootstrap() -> ServerBootstrap {
            ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.backlog, value: 1024)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelOption(.maxMessagesPerRead, value: 16)
        }

        /// The base URL with `host` in place of the default one: `https://127.0.0.1:<port>` for `127.0.0.1`.
        ///
        /// The scheme is the server's (`https` with TLS); an IPv6 address is put in brackets.
        ///
        /// - Parameter host: A host name or IP address that reaches this server, such as `127.0.0.1` or `localhost`.
        /// - Returns: `scheme://host:port`.
        public func baseURL(host: String) -> URL {
            let scheme = presentedCertificate == nil ? "http" : "https"
            let authority = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
            return URL(string: "\(scheme)://\(authority):\(port)") ?? baseURL
        }

        /// The number of TCP connections accepted so far, including ones whose TLS handshake failed.
        ///
        /// With HTTP/2, many concurrent requests share one connection: a client that multiplexes 100 calls leaves
        /// this at 1.
        public var connectionCount: Int {
            state.connectionCount
        }

        /// The protocol each TLS connection negotiated by ALPN, in the order the handshakes completed.
        ///
        /// A connection whose client offered no ALPN counts as ``TestServerTLS/ApplicationProtocol/http1``; one whose
        /// handshake failed is not listed. Always empty without TLS.
        public var negotiatedProtocols: [TestServerTLS.ApplicationProtocol] {
            state.negotiatedProtocols
        }

        /// The number of requests received so far (each request head counts once, even if never answered).
        ///
        /// Each HTTP/2 stream counts as one request.
        public var requestCount: Int {
            state.requestCount
        }

        /// Adds a route that answers `method` requests (any method when `nil`) for exactly `path`.
        ///
        /// Registered routes win over built-in ones; registering the same method and path again replaces the handler.
        /// Handlers run concurrently, one task per connection; a thrown error becomes a `500` with the error's text.
        ///
        /// ```swift
        /// server.register("GET", "/hello") { _ in .text("hi") }
        /// ```
        ///
        /// - Parameters:
        ///   - method: The method to match (case-insensitive), or `nil` for any method.
        ///   - path: The path to match exactly, without query, for example `/hello`.
        ///   - handler: Produces the response for a request.
        public func register(
            _ method: String?,
            _ path: String,
            handler: @escaping @Sendable (TestServerRequest) async throws -> TestServerResponse
        ) {
            state.register(method: method, path: path, handler: handler)
        }

        /// Stops listening, closes every open connection (stalled ones too) and waits for their tasks to end.
        ///
        /// Safe to call more than once and from several tasks; later calls wait for the first to finish.
        ///
        /// - Throws: Nothing today; declared `throws` so that a future failure to close can be reported.
        public func shutdown() async throws {
            if let connections = state.beginShutdown() {
                try? await serverChannel.close().get()
                for connection in connections {
                    connection.close(promise: nil)
                }
                acceptTask.cancel()
            }
            await acceptTask.value
        }
    }
#endif
