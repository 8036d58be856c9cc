#if TestServer
    import NIOCore

    /// A handler registered with ``TestServer/register(_:_:handler:)``.
    typealias CustomHandler = @Sendable (TestServerRequest) async throws -> TestServerResponse

    /// The mutable state a ``TestServer`` shares with its connections: counters, custom routes, open channels.
    final class ServerState: Sendable {
        private struct Contents {
            var requestCount = 0
            var connectionCount = 0
            var negotiatedProtocols: [TestServerTLS.ApplicationProtocol] = []
            var customRoutes: [String: CustomHandler] = [:]
            var connections: [ObjectIdentifier: any Channel] = [:]
            var accepted: [ObjectIdentifier: any Sendable] = [:]
            var isShutDown = false
        }

        private let contents = LockedBox(Contents())

        /// Total requests whose head was received.
        var requestCount: Int {
            contents.withLock { $0.requestCount }
        }

        func countRequest() {
            contents.withLock { $0.requestCount += 1 }
        }

        /// Total TCP connections accepted.
        var connectionCount: Int {
            contents.withLock { $0.connectionCount }
        }

        /// The protocol each TLS connection negotiated, in the order the handshakes completed.
        var negotiatedProtocols: [TestServerTLS.ApplicationProtocol] {
            contents.withLock { $0.negotiatedProtocols }
        }

        func recordNegotiated(_ applicationProtocol: TestServerTLS.ApplicationProtocol) {
            contents.withLock { $0.negotiatedProtocols.append(applicationProtocol) }
        }

        /// Counts an accepted TCP connection and keeps it in the set ``beginShutdown()`` closes until it closes.
        ///
        /// Needed for connections that no ``RequestLoop`` tracks, such as an HTTP/2 connection (whose streams are
        /// tracked one by one) or one still in its TLS handshake. A connection accepted after shutdown began is
        /// closed at once.
        func accept(_ channel: any Channel) {
            let id = ObjectIdentifier(channel)
            let isShutDown = contents.withLock { contents in
                contents.connectionCount += 1
                if !contents.isShutDown {
                    contents.connections[id] = channel
                }
                return contents.isShutDown
            }
            if isShutDown {
                channel.close(promise: nil)
                return
            }
            channel.closeFuture.whenComplete { [self] _ in
                _ = contents.withLock { $0.connections.removeValue(forKey: id) }
            }
        }

        func register(method: String?, path: String, handler: @escaping CustomHandler) {
            contents.withLock { $0.customRoutes[Self.key(method: method, path: path)] = handler }
        }

        /// The custom handler for `method` and `path`: an exact method match first, then one registered for any method.
        func customRoute(method: String, path: String) -> CustomHandler? {
            contents.withLock { contents in
                guard !contents.customRoutes.isEmpty else { return nil }
                return contents.customRoutes[Self.key(method: method, path: path)]
                    ?? contents.customRoutes[Self.key(method: nil, path: path)]
            }
        }

        /// Keeps an accepted connection's async wrapper alive until the connection closes.
        ///
        /// NIO asserts (in debug builds) when the wrapper of a connection is released before the channel is active
        /// and without its writer finished: that happens when a connection is accepted while the server shuts down
        /// and the accept loop has already stopped taking connections. Holding it until the channel's close (which
        /// finishes the writer) avoids that; a connection accepted after shutdown began is closed at once.
        func retainUntilClosed(_ wrapper: some Sendable, channel: any Channel) {
            let id = ObjectIdentifier(channel)
            let isShutDown = contents.withLock { contents in
                contents.accepted[id] = wrapper
                return contents.isShutDown
            }
            channel.closeFuture.whenComplete { _ in
                // One more turn of the event loop, after the pipeline has been torn down.
                channel.eventLoop.execute { [self] in
                    _ = contents.withLock { $0.accepted.removeValue(forKey: id) }
                }
            }
            if isShutDown {
                channel.close(promise: nil)
            } else {
                contents.withLock { $0.connections[id] = channel }
            }
        }

        /// Records an open connection; `false` (and the caller must close it) once shutdown has begun.
        func track(_ channel: any Channel) -> Bool {
            contents.withLock { contents in
                guard !contents.isShutDown else { return false }
                contents.connections[ObjectIdentifier(channel)] = channel
                return true
            }
        }

        func untrack(_ channel: any Channel) {
            _ = contents.withLock { $0.connections.removeValue(forKey: ObjectIdentifier(channel)) }
        }

        /// Marks the server as shutting down and returns the connections open at that moment.
        ///
        /// Returns `nil` when shutdown had already begun.
        func beginShutdown() -> [any Channel]? {
            contents.withLock { contents in
                guard !contents.isShutDown else { return nil }
                contents.isShutDown = true
                return Array(contents.connections.values)
            }
        }

        private static func key(method: String?, path: String) -> String {
            "\(method?.uppercased() ?? "*") \(path)"
        }
    }
#endif
