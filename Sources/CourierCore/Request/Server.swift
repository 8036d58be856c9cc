public import Foundation

/// Where requests go: a base URL for one environment, plus headers every request to it carries.
///
/// A request's ``Request/path`` is appended to the base URL's path (`https://api.example.com/v1` + `/users` gives
/// `https://api.example.com/v1/users`); it is never resolved as a relative reference, so a leading slash does not
/// drop the base path.
///
/// ```swift
/// let production = Server(baseURL: URL(string: "https://api.example.com/v1")!, environment: .production)
/// ```
public struct Server: Hashable, Sendable {
    /// The base URL: scheme, host, optional port and optional path prefix. It must not carry userinfo.
    public var baseURL: URL
    /// The environment this server belongs to.
    public var environment: Environment
    /// Header fields added to every request sent to this server (for example an API key per environment).
    public var headers: RequestHeaders
    /// TLS options for this server (pins, a private CA, a client certificate), replacing the client's
    /// ``Client/Configuration/tls`` for every request sent to it, redirects included; `nil` uses the client's.
    public var tls: TLSOptions?
    /// Proxy options for this server, replacing the client's ``Client/Configuration/proxy`` for every request sent
    /// to it, redirects included; `nil` uses the client's.
    public var proxy: ProxyOptions?

    /// Creates a server.
    ///
    /// - Parameters:
    ///   - baseURL: The base URL; a query or fragment in it is ignored.
    ///   - environment: The environment it serves; `.production` by default.
    ///   - headers: Header fields added to every request sent to it.
    ///   - tls: TLS options replacing the client's for this server; `nil` (the default) uses the client's.
    ///   - proxy: Proxy options replacing the client's for this server; `nil` (the default) uses the client's.
    public init(
        baseURL: URL,
        environment: Environment = .production,
        headers: RequestHeaders = [:],
        tls: TLSOptions? = nil,
        proxy: ProxyOptions? = nil
    ) {
        self.baseURL = baseURL
        self.environment = environment
        self.headers = headers
        self.tls = tls
        self.proxy = proxy
    }

    /// The origin of ``baseURL``.
    public var origin: Origin? { Origin(url: baseURL) }
}

extension Server {
    /// The name of a deployment of an API: production, staging, local, or one of your own.
    ///
    /// Nested in ``Server`` so that it never collides with SwiftUI's, Vapor's or Hummingbird's `Environment`.
    ///
    /// ```swift
    /// extension Server.Environment { static let qa: Self = "qa" }
    /// ```
    public struct Environment: Hashable, Sendable, RawRepresentable, ExpressibleByStringLiteral,
        CustomStringConvertible
    {
        /// The environment's name.
        public let rawValue: String

        /// Creates an environment named `rawValue`.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Creates an environment from a string literal.
        public init(stringLiteral value: String) { self.rawValue = value }

        /// The live deployment.
        public static let production: Self = "production"
        /// A pre-release deployment.
        public static let staging: Self = "staging"
        /// A server on the developer's machine.
        public static let local: Self = "local"

        /// The name.
        public var description: String { rawValue }
    }
}
