#if TestServer
    /// A request as the ``TestServer`` received it, handed to routes registered with ``TestServer/register(_:_:handler:)``.
    ///
    /// The body is buffered in full (at most ``TestServerRequest/maximumBodySize`` bytes; a larger body gets a
    /// `413` before any route runs). Header names keep the case the client sent.
    ///
    /// ```swift
    /// server.register("POST", "/echo") { request in
    ///     .text(request.header("X-Name") ?? "anonymous")
    /// }
    /// ```
    public struct TestServerRequest: Sendable {
        /// The largest request body buffered for a route: 64 MiB. `/upload` streams and has no limit.
        public static let maximumBodySize = 64 * 1024 * 1024

        /// The request method, as sent (`GET`, `POST`, …).
        public var method: String
        /// The request target, as sent: path plus query, for example `/get?a=1`.
        public var uri: String
        /// The percent-encoded path part of ``uri``, without the query.
        public var path: String
        /// The query items of ``uri``, in order, decoded as `application/x-www-form-urlencoded` (`+` is a space).
        public var queryItems: [(name: String, value: String)]
        /// The request headers in the order received, names in the case the client sent.
        public var headers: [(name: String, value: String)]
        /// The request body.
        public var body: [UInt8]
        /// The client's IP address, for example `127.0.0.1`.
        public var remoteAddress: String

        /// Creates a request value; the server builds these, tests of handlers may too.
        ///
        /// - Parameters:
        ///   - method: The request method.
        ///   - uri: The request target (path and query).
        ///   - headers: The header fields in order.
        ///   - body: The body bytes.
        ///   - remoteAddress: The client's IP address.
        public init(
            method: String,
            uri: String,
            headers: [(name: String, value: String)] = [],
            body: [UInt8] = [],
            remoteAddress: String = "127.0.0.1"
        ) {
            self.method = method
            self.uri = uri
            let (path, query) = URIParts.split(uri)
            self.path = path
            self.queryItems = FormDecoding.decodeQuery(query)
            self.headers = headers
            self.body = body
            self.remoteAddress = remoteAddress
        }

        /// The value of the first header named `name` (case-insensitive), or `nil`.
        ///
        /// - Parameter name: The header name.
        /// - Returns: The first matching value.
        public func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveEquals(name) }?.value
        }

        /// The value of the first query item named `name`, or `nil`.
        ///
        /// - Parameter name: The query item's name (exact match).
        /// - Returns: The decoded value.
        public func queryValue(_ name: String) -> String? {
            queryItems.first { $0.name == name }?.value
        }
    }
#endif
