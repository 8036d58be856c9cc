import Courier
import Foundation
import Testing

/// `ProxyOptions`: which calls go through which proxy, with curl's rules for the environment.
@Suite("ProxyOptions")
struct ProxyOptionsTests {
    private func endpoint(_ options: ProxyOptions, _ url: String) throws -> ProxyOptions.Endpoint? {
        try options.endpoint(for: try #require(URL(string: url)))
    }

    @Test("direct never proxies; an explicit proxy does, except for bypassed hosts")
    func explicitProxy() throws {
        #expect(try endpoint(.direct, "https://api.example.com/x") == nil)
        let proxy = ProxyOptions.http(
            host: "proxy.local", port: 3128, bypass: ["localhost", ".internal.example", "10.0.0.0/8", "db:5432"])
        #expect(try endpoint(proxy, "https://api.example.com/x")?.port == 3128)
        #expect(try endpoint(proxy, "http://api.example.com/x")?.host == "proxy.local")
        for bypassed in [
            "http://localhost:8080/", "https://internal.example/", "https://a.b.internal.example/",
            "http://10.20.30.40/", "http://db/",
        ] {
            #expect(try endpoint(proxy, bypassed) == nil, "\(bypassed)")
        }
        for proxied in ["https://notinternal.example/", "http://11.0.0.1/", "https://localhost.evil.example/"] {
            #expect(try endpoint(proxy, proxied) != nil, "\(proxied)")
        }
        #expect(try endpoint(.http(host: "p", port: 1, bypass: ["*"]), "https://anything.example/") == nil)
    }

    @Test("bypassed addresses as curl reads them: IPv6 blocks, an address only as itself, never as a name's suffix")
    func bypassedAddresses() throws {
        let proxy = ProxyOptions.http(
            host: "proxy.local", port: 3128, bypass: ["fd00::/8", "[2001:db8::1]:443", "0.0.1", "::ffff:10.1.0.0/112"])
        for bypassed in [
            "http://[fd00::5]/", "http://[FD12:3456::1]:8080/", "https://[2001:db8:0:0::1]/",
            "http://[::ffff:10.1.2.3]/",
        ] {
            #expect(try endpoint(proxy, bypassed) == nil, "\(bypassed)")
        }
        for proxied in ["http://10.0.0.1/", "http://[fe00::5]/", "https://[2001:db8::2]/", "http://[::1]/"] {
            #expect(try endpoint(proxy, proxied) != nil, "\(proxied)")
        }
    }

    @Test("environment: http_proxy lowercase only, https_proxy either case, all_proxy fallback, no_proxy")
    func environmentRules() throws {
        let options = ProxyOptions.environment([
            "http_proxy": "http://plain.proxy:8080",
            "HTTPS_PROXY": "secure.proxy:8443",
            "no_proxy": " .corp.example , 192.168.0.0/16",
        ])
        #expect(try endpoint(options, "http://api.example.com/")?.host == "plain.proxy")
        #expect(try endpoint(options, "https://api.example.com/")?.port == 8443)
        #expect(try endpoint(options, "https://build.corp.example/") == nil)
        #expect(try endpoint(options, "http://192.168.1.10/") == nil)
        // HTTP_PROXY in capitals is ignored (httpoxy: CGI sets it from a request's `Proxy` header).
        let capitals = ProxyOptions.environment(["HTTP_PROXY": "evil.proxy:1"])
        #expect(try endpoint(capitals, "http://api.example.com/") == nil)
        #expect(capitals.isDirect)
        // all_proxy serves a scheme without its own variable; port 1080 when none is given, as in curl.
        let all = ProxyOptions.environment(["ALL_PROXY": "http://fallback.proxy", "https_proxy": ""])
        #expect(
            try endpoint(all, "https://api.example.com/") == ProxyOptions.Endpoint(host: "fallback.proxy", port: 1080))
        #expect(try endpoint(.environment([:]), "https://api.example.com/") == nil)
        #expect(try endpoint(.environment(["https_proxy": "p:1", "NO_PROXY": "*"]), "https://x.example/") == nil)
    }

    @Test("environment credentials are percent-decoded, and never printed")
    func environmentCredentials() throws {
        let options = ProxyOptions.environment(["https_proxy": "http://svc%40corp:p%3Ass@proxy.example:3128/"])
        let found = try #require(try endpoint(options, "https://api.example.com/"))
        #expect(found.credentials == ProxyOptions.Credentials(username: "svc@corp", password: "p:ss"))
        #expect(!found.description.contains("p:ss"))
        #expect(found.description == "svc@corp:•••@proxy.example:3128")
        #expect(found.credentials?.basicAuthorization == "Basic " + Data("svc@corp:p:ss".utf8).base64EncodedString())
    }

    @Test("a proxy no transport can use fails the call instead of going direct")
    func unusableEnvironmentProxy() throws {
        for value in ["socks5://127.0.0.1:1080", "https://proxy.example:443"] {
            let error = #expect(throws: CourierError.self) {
                try endpoint(.environment(["https_proxy": value]), "https://api.example.com/")
            }
            #expect(error?.code == .unsupported, "\(value)")
            #expect(error?.message?.contains("https_proxy") == true)
        }
        let garbage = #expect(throws: CourierError.self) {
            try endpoint(.environment(["https_proxy": "http://"]), "https://api.example.com/")
        }
        #expect(garbage?.code == .invalidURL)
    }
}
