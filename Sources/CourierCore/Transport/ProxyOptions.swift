public import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#endif

/// Whether a client reaches servers directly or through an HTTP proxy, and which one.
///
/// One value means the same on every transport. Set it for a whole client (``Client/Configuration/proxy``) and
/// override it for one server or environment (``Server/proxy``). The default is ``direct``: Courier never follows
/// `HTTP_PROXY`-style environment variables unless you ask for them with ``environment``.
///
/// ```swift
/// let client = Client(server: production, transport: AsyncHTTPClientTransport()) {
///     $0.proxy = .http(host: "proxy.corp.example", port: 3128,
///                      credentials: .init(username: "svc-api", password: secret), bypass: ["localhost", ".corp.example"])
/// }
/// ```
///
/// Every request, `http` and `https` alike, goes through the proxy in a tunnel (`CONNECT`), so the proxy sees
/// only the host and port, and the credentials travel only to the proxy in `Proxy-Authorization`, never to the
/// origin (Courier also drops a `Proxy-Authorization` header set on a request). A proxy that refuses the
/// credentials fails the call with ``CourierError/Code/proxyAuthenticationRequired``; one that refuses the tunnel
/// with ``CourierError/Code/proxyFailed``. Neither is retried.
///
/// A transport that cannot route a call the way these options say fails it with
/// ``CourierError/Code/unsupported`` naming the reason; it never sends the call another way.
public struct ProxyOptions: Hashable, Sendable {
    /// Indirect: a proxy's endpoint and bypass list are a few hundred bytes, and proxy options travel in every
    /// ``TransportContext`` and ``Server`` (each byte of a call's async frames counts, issue #17); `.direct`, by far
    /// the most common, costs nothing.
    indirect enum Storage: Hashable, Sendable {
        case direct
        case server(Endpoint, bypass: Bypass)
        case environment(EnvironmentVariables)
    }

    let storage: Storage

    /// No proxy: every call connects to its server directly, whatever the environment says.
    public static let direct = ProxyOptions(storage: .direct)

    /// Every call goes through the HTTP proxy at `host`:`port`, except calls to hosts `bypass` matches.
    ///
    /// - Parameters:
    ///   - host: The proxy's host name or address.
    ///   - port: The proxy's port.
    ///   - credentials: Basic credentials sent to the proxy (`Proxy-Authorization`), never to an origin.
    ///   - bypass: Hosts reached directly, in `NO_PROXY` syntax: `example.com` matches it and its subdomains,
    ///     `.example.com` the same, an IPv4 address or CIDR block (`10.0.0.0/8`) matches addresses, `*` matches
    ///     every host. A `:port` suffix is ignored.
    public static func http(
        host: String,
        port: Int,
        credentials: Credentials? = nil,
        bypass: [String] = []
    ) -> ProxyOptions {
        ProxyOptions(
            storage: .server(Endpoint(host: host, port: port, credentials: credentials), bypass: Bypass(bypass)))
    }

    /// The proxies the process's environment names, read now, with curl's rules.
    ///
    /// `http` calls use `http_proxy` (lowercase only: a CGI server sets `HTTP_PROXY` from a request header);
    /// `https` calls use `https_proxy` or `HTTPS_PROXY`; both fall back to `all_proxy` or `ALL_PROXY`. Hosts that
    /// `no_proxy` or `NO_PROXY` match are reached directly (the syntax of ``http(host:port:credentials:bypass:)``'s
    /// `bypass`). A value is `host:port` or `http://[user:password@]host[:port]` (port 1080 when omitted, as in
    /// curl); an `https://` or `socks` proxy fails the call with ``CourierError/Code/unsupported``.
    public static var environment: ProxyOptions { environment(ProcessInfo.processInfo.environment) }

    /// The proxies `variables` name, with the rules of ``environment``: for tests, or an environment of your own.
    public static func environment(_ variables: [String: String]) -> ProxyOptions {
        ProxyOptions(storage: .environment(EnvironmentVariables(variables)))
    }

    /// Whether these options never route a call through a proxy.
    public var isDirect: Bool {
        switch storage {
        case .direct: true
        case .server: false
        case .environment(let variables): variables.isEmpty
        }
    }

    /// The proxy a call to `url` goes through, or `nil` when it connects directly.
    ///
    /// - Throws: ``CourierError`` with ``CourierError/Code/unsupported`` when the environment names a proxy no
    ///   transport can use (`https://`, `socks5://`), or ``CourierError/Code/invalidURL`` when its value is not a
    ///   proxy address: a call never silently goes direct because its proxy could not be read.
    public func endpoint(for url: URL) throws(CourierError) -> Endpoint? {
        guard let host = url.host, !host.isEmpty else { return nil }
        switch storage {
        case .direct:
            return nil
        case .server(let endpoint, let bypass):
            return bypass.matches(host) ? nil : endpoint
        case .environment(let variables):
            return try variables.endpoint(scheme: url.scheme?.lowercased() ?? "", host: host)
        }
    }
}

extension ProxyOptions {
    /// A proxy's address and credentials.
    public struct Endpoint: Hashable, Sendable, CustomStringConvertible {
        /// The proxy's host name or address.
        public var host: String
        /// The proxy's port.
        public var port: Int
        /// The Basic credentials sent to the proxy, if any.
        public var credentials: Credentials?

        /// Creates an endpoint.
        public init(host: String, port: Int, credentials: Credentials? = nil) {
            self.host = host
            self.port = port
            self.credentials = credentials
        }

        /// `proxy.example:3128`, with `user:•••@` in front when there are credentials (never the password).
        public var description: String {
            let user = credentials.map { "\($0.username):•••@" } ?? ""
            return "\(user)\(host.contains(":") ? "[\(host)]" : host):\(port)"
        }
    }

    /// The user name and password for a proxy's Basic authentication (RFC 9110 §11.7.1).
    public struct Credentials: Hashable, Sendable, CustomStringConvertible {
        /// The user name.
        public var username: String
        /// The password.
        public var password: String

        /// Creates credentials.
        public init(username: String, password: String) {
            self.username = username
            self.password = password
        }

        /// The user name; the password is never printed.
        public var description: String { "\(username):•••" }

        /// The `Proxy-Authorization` value: `Basic` and the base64 of `username:password`.
        public var basicAuthorization: String {
            "Basic " + Data("\(username):\(password)".utf8).base64EncodedString()
        }
    }
}

extension ProxyOptions {
    /// The proxy variables of an environment, as curl reads them, parsed once when the options are made.
    struct EnvironmentVariables: Hashable, Sendable {
        let http: Variable?
        let https: Variable?
        let all: Variable?
        let noProxy: Bypass?

        init(_ variables: [String: String]) {
            func value(_ names: String...) -> String? {
                for name in names {
                    if let value = variables[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty {
                        return value
                    }
                }
                return nil
            }
            http = value("http_proxy").map { Variable($0, name: "http_proxy") }
            https = value("https_proxy", "HTTPS_PROXY").map { Variable($0, name: "https_proxy") }
            all = value("all_proxy", "ALL_PROXY").map { Variable($0, name: "all_proxy") }
            noProxy = value("no_proxy", "NO_PROXY").map { Bypass($0.split(separator: ",").map(String.init)) }
        }

        var isEmpty: Bool { http == nil && https == nil && all == nil }

        func endpoint(scheme: String, host: String) throws(CourierError) -> Endpoint? {
            let variable: Variable
            switch (scheme, http, https, all) {
            case ("http", let http?, _, _): variable = http
            case ("https", _, let https?, _): variable = https
            case (_, _, _, let all?): variable = all
            default: return nil
            }
            if let noProxy, noProxy.matches(host) { return nil }
            switch variable.parsed {
            case .endpoint(let endpoint):
                return endpoint
            case .unusable(let code, let message):
                throw CourierError(code: code, stage: .transport, message: message)
            }
        }
    }

    /// One proxy variable: the proxy it names, or why it names none a transport can use.
    struct Variable: Hashable, Sendable {
        enum Parsed: Hashable, Sendable {
            case endpoint(Endpoint)
            case unusable(CourierError.Code, String)
        }

        let parsed: Parsed

        /// Reads `host:port` or `http://[user:password@]host[:port][/]`.
        init(_ value: String, name: String) {
            let text = value.contains("://") ? value : "http://" + value
            guard let components = URLComponents(string: text), let host = components.host, !host.isEmpty else {
                parsed = .unusable(.invalidURL, "invalid URL: the proxy in \(name) is not a host:port or http:// URL")
                return
            }
            let scheme = components.scheme?.lowercased() ?? "http"
            guard scheme == "http" else {
                parsed = .unusable(
                    .unsupported, "unsupported: \(name) names a \(scheme):// proxy; only http:// proxies are supported")
                return
            }
            let credentials = components.percentEncodedUser.map { user in
                Credentials(
                    username: user.removingPercentEncoding ?? user,
                    password: components.percentEncodedPassword.map { $0.removingPercentEncoding ?? $0 } ?? ""
                )
            }
            parsed = .endpoint(Endpoint(host: host, port: components.port ?? 1080, credentials: credentials))
        }
    }

    /// A `NO_PROXY`-style list of hosts reached directly, read as curl reads it: a name matches itself and the names
    /// under it; an IP address (v4 or v6) matches only itself, or a CIDR block (`10.0.0.0/8`, `fd00::/8`) it is in.
    struct Bypass: Hashable, Sendable {
        private struct Block: Hashable, Sendable {
            /// The block's address: 4 bytes (IPv4) or 16 (IPv6).
            let address: [UInt8]
            let prefix: Int

            func contains(_ other: [UInt8]) -> Bool {
                guard other.count == address.count else { return false }
                var bits = prefix
                for (mine, theirs) in zip(address, other) where bits > 0 {
                    let mask: UInt8 = bits >= 8 ? 0xFF : ~(0xFF >> UInt8(bits))
                    if mine & mask != theirs & mask { return false }
                    bits -= 8
                }
                return true
            }
        }

        private var matchesAll = false
        private var names: [String] = []
        /// The entries that are addresses, parsed once: an address matches only itself.
        private var addresses: [[UInt8]] = []
        private var blocks: [Block] = []

        init(_ entries: [String]) {
            for entry in entries {
                var entry = entry.trimmingCharacters(in: .whitespaces)
                if entry == "*" {
                    matchesAll = true
                    continue
                }
                if let slash = entry.firstIndex(of: "/"),
                    let address = Self.address(HostName.canonical(entry[..<slash])),
                    let prefix = Int(entry[entry.index(after: slash)...]), (0...address.count * 8).contains(prefix)
                {
                    blocks.append(Block(address: address, prefix: prefix))
                    continue
                }
                // `host:port` and `[v6]:port`: the port is ignored.
                if entry.hasPrefix("["), let close = entry.firstIndex(of: "]") {
                    entry = String(entry[...close])
                } else if entry.filter({ $0 == ":" }).count == 1, let colon = entry.firstIndex(of: ":") {
                    entry = String(entry[..<colon])
                }
                while entry.hasPrefix(".") { entry.removeFirst() }
                let name = HostName.canonical(entry)
                if let address = Self.address(name) {
                    addresses.append(address)
                } else if !name.isEmpty {
                    names.append(name)
                }
            }
        }

        func matches(_ host: String) -> Bool {
            if matchesAll { return true }
            let host = HostName.canonical(host)
            if let address = Self.address(host) {
                // An address is no name's subdomain: `0.0.1` must not take 10.0.0.1 past the proxy.
                return addresses.contains(address) || blocks.contains { $0.contains(address) }
            }
            return names.contains { host == $0 || host.hasSuffix("." + $0) }
        }

        /// The network-order bytes of an IPv4 (4) or IPv6 (16) address, canonical (IPv6 without brackets), as
        /// `inet_pton(3)` reads it; `nil` for a name.
        private static func address(_ text: String) -> [UInt8]? {
            var v4 = in_addr()
            if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
            var v6 = in6_addr()
            if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
            return nil
        }
    }
}
