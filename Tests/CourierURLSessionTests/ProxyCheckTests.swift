import Courier
import Foundation
import HTTPTypes
import Testing

@testable import CourierURLSession

/// URLSessionTransport refuses a call it would not route as `ProxyOptions` say.
@Suite("URLSessionTransport proxy check")
struct ProxyCheckTests {
    private let head = HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/")
    private let environment = ProxyOptions.environment(["https_proxy": "proxy.example:3128", "no_proxy": "internal"])

    @Test("the connect probe tries the proxy a request goes through, else the origin")
    func probeTarget() throws {
        let secure = try #require(URL(string: "https://api.example.com/v1"))
        let bypassed = try #require(URL(string: "https://internal/v1"))
        let plain = try #require(URL(string: "http://api.example.com:8080/v1"))
        let proxied = ConnectProbe.target(for: secure, proxies: environment)
        #expect(proxied?.host == "proxy.example" && proxied?.port == 3128)
        let direct = ConnectProbe.target(for: bypassed, proxies: environment)
        #expect(direct?.host == "internal" && direct?.port == 443)
        let other = ConnectProbe.target(for: plain, proxies: environment)  // only https_proxy is set
        #expect(other?.host == "api.example.com" && other?.port == 8080)
    }

    @Test("direct, with no proxy in the environment, is sent")
    func directWithoutEnvironment() throws {
        try URLSessionTransport.checkProxy(.direct, for: head, environment: .environment([:]))
    }

    @Test("an explicit proxy is refused as unsupported, naming the setting")
    func explicitProxy() throws {
        let error = #expect(throws: CourierError.self) {
            try URLSessionTransport.checkProxy(.http(host: "p", port: 1), for: head, environment: .environment([:]))
        }
        #expect(error?.code == .unsupported)
        #expect(error?.message?.contains("proxy") == true)
    }

    #if canImport(FoundationNetworking)
        @Test(
            "Linux: the environment's proxy is accepted only when asked for; direct is refused while libcurl would proxy"
        )
        func environmentOnLinux() throws {
            try URLSessionTransport.checkProxy(environment, for: head, environment: environment)
            let error = #expect(throws: CourierError.self) {
                try URLSessionTransport.checkProxy(.direct, for: head, environment: environment)
            }
            #expect(error?.code == .unsupported)
            #expect(error?.message?.contains("ProxyOptions.environment") == true)
            // no_proxy: libcurl goes direct, and so does Courier.
            let bypassed = HTTPRequest(method: .get, scheme: "https", authority: "internal", path: "/")
            try URLSessionTransport.checkProxy(.direct, for: bypassed, environment: environment)
        }
    #endif
}
