// `import Courier` is the one import an app or a server needs: Courier's core (requests, the client, adapters,
// decisions, errors, the swift-http-types names), and the transport the package's traits chose.
@_exported public import CourierCore

#if AsyncHTTPClient || canImport(Darwin)
    public import Foundation
#endif

#if AsyncHTTPClient
    @_exported public import CourierAsyncHTTPClient
#endif
#if canImport(Darwin)
    @_exported public import CourierURLSession
#endif

#if AsyncHTTPClient || canImport(Darwin)
    extension Client {
        /// The transport ``init(baseURL:configuration:)`` uses: one per process, shared by every client made
        /// without a transport.
        ///
        /// It is an `AsyncHTTPClientTransport` on the process-wide `HTTPClient` where the package's
        /// `AsyncHTTPClient` trait is on (the default), and a `URLSessionTransport` on Apple platforms where it is
        /// off. On Linux with the trait off there is no default (FoundationNetworking is not linked into servers
        /// unasked): add the `CourierURLSession` product and pass `URLSessionTransport()` to
        /// `init(server:transport:configuration:)`.
        public static var defaultTransport: any Transport { DefaultTransport.shared }

        /// Creates a client for one server on the ``defaultTransport``.
        ///
        /// ```swift
        /// import Courier
        ///
        /// let client = Client(baseURL: URL(string: "https://api.example.com")!)
        /// let user = try await client.get("/users/42", as: User.self)
        /// ```
        ///
        /// - Parameters:
        ///   - baseURL: The server's base URL; request paths are resolved against it.
        ///   - configuration: Coders, adapters, decisions, limits and logging.
        public init(baseURL: URL, configuration: Configuration = Configuration()) {
            self.init(
                server: Server(baseURL: baseURL), transport: DefaultTransport.shared, configuration: configuration)
        }

        /// Creates a client for one server on the ``defaultTransport``.
        ///
        /// - Parameters:
        ///   - server: Where requests go; its environment becomes the client's environment.
        ///   - configuration: Coders, adapters, decisions, limits and logging.
        public init(server: Server, configuration: Configuration = Configuration()) {
            self.init(server: server, transport: DefaultTransport.shared, configuration: configuration)
        }
    }

    /// The process-wide default transport, made on first use.
    private enum DefaultTransport {
        #if AsyncHTTPClient
            static let shared: any Transport = AsyncHTTPClientTransport()
        #else
            static let shared: any Transport = URLSessionTransport()
        #endif
    }
#endif
