#if TestServer
    import Foundation

    /// A complete response that a route registered with ``TestServer/register(_:_:handler:)`` returns.
    ///
    /// The server adds `Content-Length` (replacing any the handler set) and the `Connection` header; everything else
    /// is sent as given, in order.
    ///
    /// ```swift
    /// server.register(nil, "/teapot") { _ in .text("short and stout", status: 418) }
    /// ```
    public struct TestServerResponse: Sendable {
        /// The status code, for example `200`.
        public var status: Int
        /// The header fields, in order. Repeated names are sent as separate lines.
        public var headers: [(name: String, value: String)]
        /// The body bytes.
        public var body: [UInt8]

        /// Creates a response.
        ///
        /// - Parameters:
        ///   - status: The status code.
        ///   - headers: The header fields, in order.
        ///   - body: The body bytes.
        public init(status: Int = 200, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        /// A `text/plain; charset=utf-8` response.
        ///
        /// - Parameters:
        ///   - text: The body.
        ///   - status: The status code, `200` by default.
        /// - Returns: The response.
        public static func text(_ text: String, status: Int = 200) -> TestServerResponse {
            TestServerResponse(
                status: status,
                headers: [("Content-Type", "text/plain; charset=utf-8")],
                body: Array(text.utf8)
            )
        }

        /// An `application/json` response whose body is `json`, sent verbatim.
        ///
        /// - Parameters:
        ///   - json: JSON text.
        ///   - status: The status code, `200` by default.
        /// - Returns: The response.
        public static func json(_ json: String, status: Int = 200) -> TestServerResponse {
            TestServerResponse(status: status, headers: [("Content-Type", "application/json")], body: Array(json.utf8))
        }

        /// An `application/json` response encoding `value` with sorted keys.
        ///
        /// - Parameters:
        ///   - value: The value to encode.
        ///   - status: The status code, `200` by default.
        /// - Returns: The response.
        /// - Throws: The `EncodingError` from `JSONEncoder` when `value` cannot be encoded.
        public static func json(encoding value: some Encodable, status: Int = 200) throws -> TestServerResponse {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let data = try encoder.encode(value)
            return TestServerResponse(
                status: status, headers: [("Content-Type", "application/json")], body: Array(data))
        }
    }
#endif
