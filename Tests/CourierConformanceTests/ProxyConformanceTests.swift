import Courier
import CourierTestServer
import Foundation
import HTTPTypes
import Testing

/// Calls through a real HTTP proxy (Debian's tinyproxy, started by `scripts/tinyproxy`): `http` and `https` in a
/// `CONNECT` tunnel, proxy credentials, a proxy that cannot reach the server, the environment's proxies only on
/// request, and `Proxy-Authorization` never reaching an origin.
extension Conformance {
    @Suite("Proxies (tinyproxy)")
    struct ProxyConformanceTests {
        @Test(
            "http through the proxy: one CONNECT tunnel per connection, the call reaches the server",
            arguments: TransportKind.all)
        func httpThroughProxy(transport: TransportKind) async throws {
            let lab = try ProxyLab.running()
            try await withTestServer { server in
                try await tlsCase("http via tinyproxy", on: transport, needs: [.proxy]) {
                    let client = proxyClient(transport, server.baseURL, proxy: lab.open)
                    let before = try lab.tunnels(to: server.baseURL)
                    for index in 0..<3 {
                        let echo = try await client.send(ProxiedCall<Echo>(path: "/get", query: ["i": index]))
                        #expect(echo.args == ["i": String(index)])
                    }
                    #expect(server.requestCount == 3)
                    // Three calls on one kept-alive tunnel: the proxy saw one CONNECT to this server's port.
                    #expect(try lab.tunnels(to: server.baseURL) == before + 1)
                    return "ok (\(try lab.tunnels(to: server.baseURL) - before) CONNECT)"
                }
            }
        }

        @Test(
            "https through the proxy to nginx: TLS and pins run end to end inside the tunnel",
            arguments: TransportKind.all)
        func httpsThroughProxy(transport: TransportKind) async throws {
            let lab = try ProxyLab.running()
            guard let url = NginxLab.url, let trust = try NginxLab.trust(),
                let rootPin = NginxLab.rootPin
            else {
                try skipCase("https via tinyproxy: \(NginxLab.missingReason)")
            }
            try await tlsCase("https via tinyproxy to nginx", on: transport, needs: [.proxy, .customTrust]) {
                var tls = TLSOptions(trust: trust)
                tls.pins = [try TLSOptions.PinSet(host: "localhost", pins: [rootPin, TLSLab.unrelatedPin("backup")])]
                let before = try lab.tunnels(to: url)
                var configuration = Client.Configuration()
                configuration.tls = tls
                configuration.proxy = lab.open
                let client = Client(
                    server: Server(baseURL: url), transport: transport.make(), configuration: configuration)
                let echo = try await client.send(ProxiedCall<Echo>(path: "/get", query: ["via": "proxy"]))
                #expect(echo.args == ["via": "proxy"])
                #expect(try lab.tunnels(to: url) == before + 1)
                // Pinned to another trusted root (a MITM proxy's CA the device trusts): the handshake inside the
                // tunnel fails, and the server sees nothing.
                let interceptor = try TLSLab.interceptor.get().root
                configuration.tls.trust = .only(
                    trust.certificates + (try TLSOptions.Certificate.pem(interceptor.certificatePEM)))
                configuration.tls.pins = [
                    try TLSOptions.PinSet(
                        host: "localhost", pins: [interceptor.spkiSHA256Base64, TLSLab.unrelatedPin("b")])
                ]
                let pinned = Client(
                    server: Server(baseURL: url), transport: transport.make(), configuration: configuration)
                let error = try await expectTLSFailure { try await pinned.send(ProxiedCall<Echo>(path: "/get")) }
                #expect(
                    error?.code == .pinMismatch || error?.code == .untrustedCertificate, "\(String(describing: error))")
                return "ok, then \(error?.code.description ?? "-") with unrelated pins"
            }
        }

        @Test(
            "proxy credentials: none → proxyAuthenticationRequired at once, not retried; right ones → ok",
            arguments: TransportKind.all)
        func proxyCredentials(transport: TransportKind) async throws {
            let lab = try ProxyLab.running()
            try await withTestServer { server in
                try await tlsCase("407 then credentials", on: transport, needs: [.proxy]) {
                    let anonymous = proxyClient(transport, server.baseURL, proxy: lab.authenticated(nil))
                    let start = ContinuousClock.now
                    let error = try await expectTLSFailure { try await anonymous.send(ProxiedCall<Echo>(path: "/get")) }
                    let elapsed = ContinuousClock.now - start
                    #expect(error?.code == .proxyAuthenticationRequired, "\(String(describing: error))")
                    #expect(attempts(error) == 1, "a 407 from the proxy was retried")
                    #expect(elapsed < .seconds(3), "took \(elapsed)")
                    #expect(server.requestCount == 0)
                    let wrong = proxyClient(
                        transport, server.baseURL,
                        proxy: lab.authenticated(.init(username: lab.user, password: "not-" + lab.password)))
                    let refused = try await expectTLSFailure { try await wrong.send(ProxiedCall<Echo>(path: "/get")) }
                    // tinyproxy 1.11 answers wrong credentials with 401 (not 407), which is a refused tunnel.
                    #expect(
                        refused?.code == .proxyAuthenticationRequired || refused?.code == .proxyFailed,
                        "\(String(describing: refused))")
                    #expect(attempts(refused) == 1)
                    #expect(
                        refused.map { !"\($0)".contains(lab.password) } ?? true, "the password leaked into the error")

                    let signedIn = proxyClient(
                        transport, server.baseURL,
                        proxy: lab.authenticated(.init(username: lab.user, password: lab.password)))
                    let echo = try await signedIn.send(ProxiedCall<Echo>(path: "/get", query: ["signed": "in"]))
                    #expect(echo.args == ["signed": "in"])
                    #expect(echo.headers.keys.contains { $0.lowercased() == "proxy-authorization" } == false)
                    #expect(server.requestCount == 1)
                    return "\(error?.code.description ?? "-") in \(elapsed), then ok"
                }
            }
        }

        @Test(
            "a proxy that cannot reach the server → proxyFailed; an unreachable proxy → connectionRefused",
            arguments: TransportKind.all)
        func proxyFailures(transport: TransportKind) async throws {
            let lab = try ProxyLab.running()
            let closed = try Sockets.RefusingPort()
            try await tlsCase("tunnel to a closed port", on: transport, needs: [.proxy]) {
                let client = proxyClient(transport, URL(string: "http://127.0.0.1:\(closed.port)")!, proxy: lab.open)
                let start = ContinuousClock.now
                let error = try await expectTLSFailure { try await client.send(ProxiedCall<Echo>(path: "/get")) }
                let elapsed = ContinuousClock.now - start
                #expect(error?.code == .proxyFailed, "\(String(describing: error))")
                #expect(attempts(error) == 1, "a refused tunnel was retried")
                return "\(error?.code.description ?? "-") in \(elapsed)"
            }
            let noProxy = try Sockets.RefusingPort()
            try await withTestServer { server in
                try await tlsCase("proxy port closed", on: transport, needs: [.proxy]) {
                    let client = proxyClient(
                        transport, server.baseURL, proxy: .http(host: "127.0.0.1", port: noProxy.port), retries: false)
                    let error = try await expectTLSFailure { try await client.send(ProxiedCall<Echo>(path: "/get")) }
                    #expect(error?.code == .connectionRefused, "\(String(describing: error))")
                    #expect(server.requestCount == 0, "the call went around the proxy")
                    return error?.code.description ?? "-"
                }
            }
        }

        @Test(
            "environment proxies only when asked: http_proxy used, no_proxy bypasses, direct ignores them",
            arguments: TransportKind.all)
        func environmentProxies(transport: TransportKind) async throws {
            let lab = try ProxyLab.running()
            let deadProxy = try Sockets.RefusingPort()
            try await withTestServer { server in
                try await tlsCase("ProxyOptions.environment", on: transport, needs: [.proxy]) {
                    let through = proxyClient(
                        transport, server.baseURL, proxy: .environment(["http_proxy": lab.openURL.absoluteString]))
                    let before = try lab.tunnels(to: server.baseURL)
                    _ = try await through.send(ProxiedCall<Echo>(path: "/get"))
                    #expect(try lab.tunnels(to: server.baseURL) == before + 1)
                    // no_proxy names the host: direct, although the proxy is dead.
                    let bypassed = proxyClient(
                        transport, server.baseURL,
                        proxy: .environment([
                            "http_proxy": "127.0.0.1:\(deadProxy.port)", "NO_PROXY": "example.com, 127.0.0.0/8",
                        ]))
                    _ = try await bypassed.send(ProxiedCall<Echo>(path: "/get"))
                    // HTTP_PROXY in capitals is not read (a CGI server sets it from a request's Proxy header).
                    let capitals = proxyClient(
                        transport, server.baseURL, proxy: .environment(["HTTP_PROXY": "127.0.0.1:\(deadProxy.port)"]))
                    _ = try await capitals.send(ProxiedCall<Echo>(path: "/get"))
                    let dead = proxyClient(
                        transport, server.baseURL, proxy: .environment(["all_proxy": "127.0.0.1:\(deadProxy.port)"]),
                        retries: false)
                    let error = try await expectTLSFailure { try await dead.send(ProxiedCall<Echo>(path: "/get")) }
                    #expect(error?.code == .connectionRefused, "\(String(describing: error))")
                    #expect(server.requestCount == 3)
                    return "ok (proxy, no_proxy, HTTP_PROXY ignored, all_proxy → \(error?.code.description ?? "-"))"
                }
            }
        }

        @Test(
            "row 43: through an intercepting proxy whose CA is trusted (mitmproxy), a pinned host fails",
            arguments: TransportKind.all)
        func pinnedThroughInterceptor(transport: TransportKind) async throws {
            let environment = ProcessInfo.processInfo.environment
            guard let mitm = environment["COURIER_MITM_URL"].flatMap(URL.init(string:)),
                let mitmCA = environment["COURIER_MITM_CA"], let url = NginxLab.url, let trust = try NginxLab.trust(),
                let rootPin = NginxLab.rootPin
            else {
                try skipCase("mitmproxy: COURIER_MITM_URL or the nginx lab is missing (scripts/test starts them)")
            }
            try await tlsCase("pinned host via mitmproxy", on: transport, needs: [.proxy, .customTrust, .pinning]) {
                var configuration = Client.Configuration()
                configuration.proxy = .http(host: mitm.host ?? "", port: mitm.port ?? 0)
                // The device trusts the interceptor's CA as well as the lab's.
                configuration.tls.trust = .only(
                    trust.certificates + (try TLSOptions.Certificate.file(at: URL(fileURLWithPath: mitmCA))))
                let unpinned = Client(
                    server: Server(baseURL: url), transport: transport.make(), configuration: configuration)
                // Unpinned, the interception succeeds: the CA is trusted, so only a pin can tell.
                let echo = try await unpinned.send(ProxiedCall<Echo>(path: "/get", query: ["seen": "by-mitm"]))
                #expect(echo.args == ["seen": "by-mitm"])
                configuration.tls.pins = [
                    try TLSOptions.PinSet(host: "localhost", pins: [rootPin, TLSLab.unrelatedPin("mitm backup")])
                ]
                let pinned = Client(
                    server: Server(baseURL: url), transport: transport.make(), configuration: configuration)
                let start = ContinuousClock.now
                let error = try await expectTLSFailure {
                    try await pinned.send(ProxiedCall<Echo>(path: "/get", query: ["seen": "never"]))
                }
                let elapsed = ContinuousClock.now - start
                // Through a proxy Courier does not re-handshake to tell a pin failure from an unknown root: the
                // chain leads to no pinned key, which on AsyncHTTPClient is an untrusted chain.
                #expect(
                    error?.code == .pinMismatch || error?.code == .untrustedCertificate, "\(String(describing: error))")
                #expect(attempts(error) == 1, "a TLS failure was retried")
                return "unpinned ok, pinned \(error?.code.description ?? "-") in \(elapsed)"
            }
        }

        @Test("Proxy-Authorization set on a request never reaches the origin", arguments: TransportKind.all)
        func proxyAuthorizationStripped(transport: TransportKind) async throws {
            try await withTestServer { server in
                let client = Client(server: Server(baseURL: server.baseURL), transport: transport.make())
                var call = ProxiedCall<Echo>(path: "/get")
                call.headers = ["Proxy-Authorization": "Basic c2VjcmV0OnNlY3JldA==", "X-Kept": "yes"]
                let echo = try await client.send(call)
                let names = Set(echo.headers.keys.map { $0.lowercased() })
                #expect(names.contains("x-kept"))
                #expect(!names.contains("proxy-authorization"))
            }
        }
    }
}

/// The tinyproxy lab that `scripts/tinyproxy` starts, read from its environment variables.
struct ProxyLab {
    let openURL: URL
    let authURL: URL
    let log: URL
    let user: String
    let password: String

    static let missingReason = "COURIER_PROXY_URL is not set: run scripts/test, or source scripts/tinyproxy"

    /// The running lab; skips the test case (``skipCase(_:sourceLocation:)``) when it is not running.
    static func running(_ function: String = #function) throws -> ProxyLab {
        let environment = ProcessInfo.processInfo.environment
        guard let open = environment["COURIER_PROXY_URL"].flatMap(URL.init(string:)),
            let auth = environment["COURIER_PROXY_AUTH_URL"].flatMap(URL.init(string:)),
            let log = environment["COURIER_PROXY_LOG"], let user = environment["COURIER_PROXY_USER"],
            let password = environment["COURIER_PROXY_PASSWORD"]
        else {
            try skipCase("\(function): \(missingReason)")
        }
        return ProxyLab(
            openURL: open, authURL: auth, log: URL(fileURLWithPath: log), user: user, password: password)
    }

    /// The open proxy.
    var open: ProxyOptions { .http(host: openURL.host ?? "", port: openURL.port ?? 0) }

    /// The proxy that wants credentials, with `credentials`.
    func authenticated(_ credentials: ProxyOptions.Credentials?) -> ProxyOptions {
        .http(host: authURL.host ?? "", port: authURL.port ?? 0, credentials: credentials)
    }

    /// How many `CONNECT` requests to `url`'s host and port the open proxy has logged.
    func tunnels(to url: URL) throws -> Int {
        let text = try String(contentsOf: log, encoding: .utf8)
        let target = "CONNECT \(url.host ?? ""):\(url.port ?? 0) "
        return text.components(separatedBy: "\n").filter { $0.contains(target) }.count
    }
}

/// A client for `baseURL` through `proxy`; with `retries: false`, no automatic retry.
func proxyClient(_ transport: TransportKind, _ baseURL: URL, proxy: ProxyOptions, retries: Bool = true) -> Client {
    var configuration = Client.Configuration()
    configuration.proxy = proxy
    if !retries { configuration.retryPolicy = RetryPolicy(maxRetries: 0) }
    return Client(server: Server(baseURL: baseURL), transport: transport.make(), configuration: configuration)
}

/// A request with everything the proxy tests vary.
struct ProxiedCall<Value: Decodable & Sendable>: Request {
    typealias Response = Value
    var path: String
    var query: Parameters? = nil
    var headers: RequestHeaders = [:]
}

extension Conformance.ProxyConformanceTests {
    @Test(
        "allowsInsecureLoopback never applies through a proxy: the proxy's localhost is checked like any host",
        arguments: TransportKind.all)
    func insecureLoopbackNotThroughProxy(transport: TransportKind) async throws {
        let lab = try ProxyLab.running()
        let authority = try TLSLab.authority.get()
        try await withTLSServer(TestServerTLS(authority: authority, mode: .selfSigned)) { server in
            try await tlsCase("self-signed localhost via tinyproxy", on: transport, needs: [.proxy, .insecureLoopback])
            {
                var configuration = Client.Configuration()
                configuration.tls = TLSOptions(allowsInsecureLoopback: true)
                let direct = Client(
                    server: Server(baseURL: server.baseURL), transport: transport.make(), configuration: configuration)
                _ = try await direct.send(ProxiedCall<Echo>(path: "/get"))
                #expect(server.requestCount == 1)
                configuration.proxy = lab.open
                configuration.retryPolicy = .disabled
                let proxied = Client(
                    server: Server(baseURL: server.baseURL), transport: transport.make(), configuration: configuration)
                let error = try await expectTLSFailure { try await proxied.send(ProxiedCall<Echo>(path: "/get")) }
                #expect(error?.code == .untrustedCertificate, "\(String(describing: error))")
                #expect(server.requestCount == 1, "the proxied call reached the server")
                return "ok direct, \(error?.code.description ?? "-") through the proxy"
            }
        }
    }
}
