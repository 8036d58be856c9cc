import CourierCore
import HTTPTypes

extension URLSessionTransport {
    /// Refuses, before anything is sent, a TLS setting this transport cannot honour for an `https` request.
    ///
    /// URLSession secures connections with the platform's stack: system roots, the platform's minimum version
    /// (TLS 1.2 on Apple platforms and on Debian's OpenSSL 3 under FoundationNetworking), HTTP/2 when offered.
    /// FoundationNetworking on Linux gives no hook for trust, pins or client certificates at all (libcurl's CA
    /// bundle is fixed, and no server-trust challenge reaches the delegate); this transport does not map them on
    /// Apple platforms yet either. So every setting other than the defaults fails the call with
    /// `CourierError.Code.unsupported`, naming the setting, rather than being silently ignored.
    static func checkTLS(_ options: TLSOptions, for head: HTTPRequest) throws {
        guard head.scheme?.lowercased() == "https", !options.isDefault else { return }
        let host = head.url.flatMap(Origin.init(url:))?.host ?? ""
        var settings: [String] = []
        if options.trust != .system { settings.append("custom trust roots (TLSOptions.trust)") }
        if options.pinSet(for: host) != nil { settings.append("public-key pinning (TLSOptions.pins)") }
        if options.clientIdentity != nil { settings.append("a client certificate (TLSOptions.clientIdentity)") }
        if options.minimumVersion != .tls12 {
            settings.append("a minimum version of \(options.minimumVersion) (TLSOptions.minimumVersion)")
        }
        if options.httpVersions != .automatic { settings.append("HTTP/1.1 only (TLSOptions.httpVersions)") }
        if options.allowsInsecureLoopback, TLSOptions.isLoopback(host) {
            settings.append("skipping certificate checks for loopback (TLSOptions.allowsInsecureLoopback)")
        }
        guard !settings.isEmpty else { return }
        throw CourierError(
            code: .unsupported,
            stage: .transport,
            message: "unsupported: URLSessionTransport cannot honour \(settings.joined(separator: ", "))"
        )
    }
}
