import CourierTestServer
import Foundation

/// The embedded servers the harness measures against: a plain HTTP one, and a TLS one per TLS protocol.
///
/// Each serves `GET /tiny`; each TLS server also serves `GET /loopback/negotiated`, the number of its connections
/// per ALPN protocol (`{"h2": 2}`), so the harness can check that the `h2` column really was HTTP/2.
struct EmbeddedServers: Sendable {
    /// The plain HTTP server.
    let plain: TestServer
    /// The TLS servers by protocol.
    let tls: [WireProtocol: TestServer]
    /// The PEM of the root the TLS servers' chains lead to; `nil` without TLS servers.
    let rootCertificatePEM: String?

    /// The path of the route that reports the negotiated protocols.
    static let negotiatedPath = "/loopback/negotiated"

    /// Starts the plain server and one TLS server per TLS protocol in `protocols`.
    ///
    /// - Parameters:
    ///   - protocols: The protocols asked for; the plain server runs whatever they are (the scale and auth tests
    ///     use it).
    ///   - port: The plain server's port; `0` picks a free one.
    /// - Throws: The server's error when one cannot bind, or the authority's when it cannot make certificates.
    static func start(protocols: [WireProtocol], port: Int = 0) async throws -> EmbeddedServers {
        let plain = try await TestServer.start(port: port)
        plain.register("GET", "/tiny") { _ in .json(TinyPayload.json) }
        let secure = protocols.filter(\.isSecure)
        guard !secure.isEmpty else { return EmbeddedServers(plain: plain, tls: [:], rootCertificatePEM: nil) }
        let authority = try TestCertificateAuthority(name: "Courier Loopback")
        var servers: [WireProtocol: TestServer] = [:]
        for wire in secure {
            guard let offered = wire.serverApplicationProtocols else { continue }
            let server = try await TestServer.start(
                tls: TestServerTLS(authority: authority, applicationProtocols: offered))
            server.register("GET", "/tiny") { _ in .json(TinyPayload.json) }
            server.register("GET", negotiatedPath) { [weak server] _ in
                var counts: [String: Int] = [:]
                for negotiated in server?.negotiatedProtocols ?? [] {
                    counts[negotiated.rawValue, default: 0] += 1
                }
                return try .json(encoding: counts)
            }
            servers[wire] = server
        }
        return EmbeddedServers(plain: plain, tls: servers, rootCertificatePEM: authority.root.certificatePEM)
    }

    /// Every server as an endpoint, by protocol.
    var endpoints: [WireProtocol: ServerHost.Endpoint] {
        var endpoints = [
            WireProtocol.http: ServerHost.Endpoint(wire: .http, baseURL: plain.baseURL, rootCertificatePEM: nil)
        ]
        for (wire, server) in tls {
            endpoints[wire] = ServerHost.Endpoint(
                wire: wire, baseURL: server.baseURL, rootCertificatePEM: rootCertificatePEM)
        }
        return endpoints
    }

    /// What `--serve` prints: the plain server's URL alone on the first line (what a script reading one line
    /// expects), then `<protocol> <URL>` per TLS server, then `root-ca <base64 of the root's PEM>`.
    var announcement: String {
        var lines = [plain.baseURL.absoluteString]
        for wire in WireProtocol.allCases {
            if let server = tls[wire] { lines.append("\(wire.rawValue) \(server.baseURL.absoluteString)") }
        }
        if let rootCertificatePEM {
            lines.append("root-ca \(Data(rootCertificatePEM.utf8).base64EncodedString())")
        }
        return lines.joined(separator: "\n")
    }

    /// The endpoints an ``announcement`` names, once it names every one of `protocols`; `nil` while it does not.
    ///
    /// - Parameters:
    ///   - text: What the server process has printed so far.
    ///   - protocols: The protocols it was asked to serve.
    static func endpoints(announced text: String, protocols: [WireProtocol]) -> [WireProtocol: ServerHost.Endpoint]? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        guard let first = lines.first, let plainURL = URL(string: first), plainURL.port != nil else { return nil }
        var urls: [WireProtocol: URL] = [.http: plainURL]
        var rootPEM: String?
        for line in lines.dropFirst() {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            if parts[0] == "root-ca" {
                rootPEM = Data(base64Encoded: parts[1]).map { String(decoding: $0, as: UTF8.self) }
            } else if let wire = WireProtocol(rawValue: parts[0]), let url = URL(string: parts[1]), url.port != nil {
                urls[wire] = url
            }
        }
        let secure = protocols.filter(\.isSecure)
        guard secure.allSatisfy({ urls[$0] != nil }), secure.isEmpty || rootPEM != nil else { return nil }
        return urls.reduce(into: [:]) { endpoints, entry in
            endpoints[entry.key] = ServerHost.Endpoint(
                wire: entry.key, baseURL: entry.value, rootCertificatePEM: entry.key.isSecure ? rootPEM : nil)
        }
    }
}
