#if TestServer
    import Foundation
    import Logging
    import NIOCore
    import NIOHTTP1
    import NIOHTTP2
    import NIOPosix
    import NIOSSL

    extension TestServer {
        /// What a TLS connection becomes once ALPN has decided: an HTTP/1.1 connection, or HTTP/2 streams (`nil` for
        /// a stream refused by a ``TestServerTLS/GoAway``).
        private typealias Negotiated = NIONegotiatedHTTPVersion<
            NIOAsyncChannel<HTTPServerRequestPart, ByteBuffer>,
            NIOHTTP2Handler.AsyncStreamMultiplexer<NIOAsyncChannel<HTTPServerRequestPart, ByteBuffer>?>
        >

        /// Starts the TLS listener: NIOSSL, then ALPN, then either the HTTP/1.1 pipeline or HTTP/2 with one
        /// ``RequestLoop`` per stream.
        static func startTLS(host: String, port: Int, logger: Logger, tls: TestServerTLS) async throws -> TestServer {
            let prepared = try tls.prepare()
            let state = ServerState()
            let server = try await bootstrap()
                .bind(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        state.accept(channel)
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: prepared.context))
                    }.flatMap {
                        channel.configureHTTP2AsyncSecureUpgrade(
                            http1ConnectionInitializer: { channel in
                                channel.eventLoop.makeCompletedFuture { try http1Connection(channel, state: state) }
                            },
                            http2ConnectionInitializer: { channel in
                                channel.eventLoop.makeCompletedFuture {
                                    try http2Connection(
                                        channel, state: state, goAway: tls.goAway,
                                        maxConcurrentStreams: tls.maxConcurrentStreams)
                                }
                            }
                        )
                    }
                }
            let loop = RequestLoop(state: state, logger: logger, scheme: "https")
            let acceptTask = Task {
                // The connections in flight when the accept loop ends are served to their end.
                _ = try? await withConnectionTasks { start in
                    do {
                        try await server.executeThenClose { connections in
                            for try await negotiation in connections {
                                start { await serve(negotiation, loop: loop, state: state, logger: logger) }
                            }
                        }
                    } catch {
                        logger.debug("accept loop ended", metadata: ["error": "\(error)"])
                    }
                }
            }
            let boundPort = server.channel.localAddress?.port ?? port
            logger.debug("listening with TLS", metadata: ["port": "\(boundPort)", "mode": "\(tls.mode)"])
            let urlHost = host == "::1" ? "[::1]" : "localhost"
            return TestServer(
                port: boundPort,
                baseURL: URL(string: "https://\(urlHost):\(boundPort)") ?? URL(fileURLWithPath: "/"),
                presentedCertificate: prepared.presented,
                state: state,
                serverChannel: server.channel,
                acceptTask: acceptTask
            )
        }

        /// Waits for the handshake and ALPN, then serves the connection (HTTP/1.1) or each of its streams (HTTP/2).
        private static func serve(
            _ negotiation: EventLoopFuture<Negotiated>,
            loop: RequestLoop,
            state: ServerState,
            logger: Logger
        ) async {
            do {
                switch try await negotiation.get() {
                case .http1_1(let connection):
                    state.recordNegotiated(.http1)
                    await loop.run(connection)
                case .http2(let multiplexer):
                    state.recordNegotiated(.http2)
                    try await withConnectionTasks { start in
                        for try await stream in multiplexer.inbound {
                            guard let stream else { continue }
                            start { await loop.run(stream) }
                        }
                    }
                }
            } catch {
                logger.debug("TLS connection ended", metadata: ["error": "\(error)"])
            }
        }

        /// The HTTP/1.1 pipeline, as for plain HTTP but after TLS.
        private static func http1Connection(
            _ channel: any Channel,
            state: ServerState
        ) throws -> NIOAsyncChannel<HTTPServerRequestPart, ByteBuffer> {
            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
            let wrapper = try NIOAsyncChannel<HTTPServerRequestPart, ByteBuffer>(wrappingChannelSynchronously: channel)
            state.retainUntilClosed(wrapper, channel: channel)
            return wrapper
        }

        /// The HTTP/2 pipeline: each stream decodes to HTTP/1-style request parts and takes raw response bytes; with
        /// `goAway`, a stream the connection refuses gets no pipeline and becomes `nil`.
        private static func http2Connection(
            _ channel: any Channel,
            state: ServerState,
            goAway: TestServerTLS.GoAway?,
            maxConcurrentStreams: Int
        ) throws -> NIOHTTP2Handler.AsyncStreamMultiplexer<NIOAsyncChannel<HTTPServerRequestPart, ByteBuffer>?> {
            var configuration = NIOHTTP2Handler.Configuration()
            configuration.connection.initialSettings = [
                HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams),
                HTTP2Setting(parameter: .maxHeaderListSize, value: 1 << 16),
            ]
            let gate = goAway.map { HTTP2GoAwayGate($0, connection: channel) }
            return try channel.pipeline.syncOperations.configureAsyncHTTP2Pipeline(
                mode: .server,
                configuration: configuration
            ) { stream in
                stream.eventLoop.makeCompletedFuture {
                    guard gate?.admit(stream) ?? true else { return nil }
                    try stream.pipeline.syncOperations.addHandler(HTTP2StreamResetter())
                    try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                    try stream.pipeline.syncOperations.addHandler(HTTP2ResponseTranslator())
                    let wrapper = try NIOAsyncChannel<HTTPServerRequestPart, ByteBuffer>(
                        wrappingChannelSynchronously: stream
                    )
                    state.retainUntilClosed(wrapper, channel: stream)
                    return wrapper
                }
            }
        }
    }
#endif
