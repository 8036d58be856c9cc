public import Foundation

/// The origin of a URL: scheme, host and port, canonicalised for comparison.
///
/// The scheme is lowercased, the host canonicalised (lowercased, IDNA dots and non-ASCII labels turned into
/// their ASCII form, a trailing dot removed), and the default port of the scheme (80 for `http`, 443 for `https`)
/// is filled in, so `HTTPS://API.example.com.:443`, `https://api。example。com` and `https://api.example.com` are
/// the same origin. Credentials (a bearer token, cookies) are only ever attached to
/// the origins they were configured for.
public struct Origin: Hashable, Sendable, CustomStringConvertible {
    /// The lowercased scheme, such as `https`.
    public let scheme: String
    /// The lowercased host, without a trailing dot.
    public let host: String
    /// The port, with the scheme's default filled in.
    public let port: Int

    /// Creates an origin from its parts, canonicalising them.
    public init(scheme: String, host: String, port: Int? = nil) {
        let scheme = scheme.lowercased()
        self.scheme = scheme
        self.host = HostName.canonical(host)
        self.port = port ?? Origin.defaultPort(for: scheme) ?? 0
    }

    /// Creates the origin of `url`, or `nil` when it has no scheme or host.
    public init?(url: URL) {
        guard let scheme = url.scheme, let host = url.host, !host.isEmpty else { return nil }
        self.init(scheme: scheme, host: host, port: url.port)
    }

    /// The default port for `http` and `https`.
    public static func defaultPort(for scheme: String) -> Int? {
        switch scheme.lowercased() {
        case "http": 80
        case "https": 443
        default: nil
        }
    }

    /// `scheme://host:port`.
    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(shownHost):\(port)"
    }
}
