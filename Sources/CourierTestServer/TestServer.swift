public import Foundation
public import Logging
import NIOCore
import NIOHTTP1
import NIOPosix

/// An in-process HTTP/1.1 server on loopback with httpbin-compatible routes and scriptable faults.
///
/// The server binds `127.0.0.1` on an ephemeral port, serves any number of concurrent keep-alive connections on
/// NIO's shared event loops, and answers httpbin 0.10's routes (`/get`, `/post`, `/anything`, `/status/{code}`,
/// `/redirect/{n}`, `/stream-bytes/{n}`, `/gzip`, …) with the same JSON shapes, plus `/upload`, which counts a
/// streamed body of any size, and the fault routes under `/fault/` (truncated bodies, resets, stalls, conflicting
/// framing, gzip bombs, header floods, redirect loops), so that any client, curl included, can provoke them.
///
/// ```swift
/// let server = try await TestServer.start()
/// defer { Task { try await server.shutdown() } }
/// let url = server.baseURL.appending(path: "fault/truncate")
/// ```
///
/// Call ``shutdown()`` when done: it closes every connection, including stalled ones.
public final class TestServer: Sendable {
    /// The port the server listens on.
    public let port: Int

    /// `http://127.0.0.1:<port>`.
    public let baseURL: URL

    private let state: ServerState
    private let serverChannel: any Channel
    private let acceptTask: Task<Void, Never>

    private init(port: Int, state: ServerState, serverChannel: any Channel, acceptTask: Task<Void, Never>) {
        self.port = port
        self.baseURL = URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/")
        self.state = state
        self.serverChannel = serverChannel
        self.acceptTask = acceptTask
    }

    /// Starts a server listening on loopback.
    ///
    /// - Parameters:
    ///   - host: The address to bind. Only loopback addresses (`127.0.0.1`, `::1`, `localhost`) are accepted.
    ///   - port: The port; `0` (the default) picks a free ephemeral port, which ``port`` then reports.
    ///   - logger: Where connection-level events go at debug level; silent when `nil`.
    /// - Returns: The running server.
    /// - Throws: ``TestServerError/nonLoopbackHost(_:)`` for any other host, or NIO's error when binding fails.
    public static func start(host: String = "127.0.0.1", port: Int = 0, logger: Logger? = nil) async throws
        -> TestServer
    {
        guard ["127.0.0.1", "::1", "localhost"].contains(host) else {
            throw TestServerError.nonLoopbackHost(host)
        }
        let logger = logger ?? Logger(label: "CourierTestServer", factory: { _ in SwiftLogNoOpLogHandler() })
        let state = ServerState()
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .bind(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
                    let wrapper = try NIOAsyncChannel<HTTPServerRequestPart, ByteBuffer>(
                        wrappingChannelSynchronously: channel
                    )
                    state.retainUntilClosed(wrapper, channel: channel)
                    return wrapper
                }
            }
        let loop = RequestLoop(state: state, logger: logger)
        let acceptTask = Task {
            await withDiscardingTaskGroup { group in
                do {
                    try await server.executeThenClose { connections in
                        for try await connection in connections {
                            group.addTask { await loop.run(connection) }
                        }
                    }
                } catch {
                    logger.debug("accept loop ended", metadata: ["error": "\(error)"])
                }
            }
        }
        let boundPort = server.channel.localAddress?.port ?? port
        logger.debug("listening", metadata: ["port": "\(boundPort)"])
        return TestServer(port: boundPort, state: state, serverChannel: server.channel, acceptTask: acceptTask)
    }

    /// The number of requests received so far (each request head counts once, even if never answered).
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
