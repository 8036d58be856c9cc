import Courier
import CourierTestServer
import CourierURLSession
import Foundation
import HTTPTypes
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension Conformance {
    /// A URLSession configuration of your own keeps its other settings, but not URLSession's cookie store and cache,
    /// which Courier's `CookieJar` and `HTTPCache` replace.
    @Suite("Conformance: URLSession with your configuration", .timeLimit(.minutes(1)))
    struct URLSessionConfigurationConformanceTests {
        struct Cookies: Request {
            typealias Response = Data
            var path: String
            var query: Parameters? = nil
        }

        @Test("with URLSessionConfiguration.default, no cookie is stored or sent behind Courier's back")
        func defaultConfigurationSendsNoStoredCookies() async throws {
            try await withTestServer { server in
                let client = Client(
                    server: Server(baseURL: server.baseURL),
                    transport: URLSessionTransport(configuration: .default))
                // A 302 that sets a cookie, then the page that echoes the cookies it received.
                let body = try await client.send(Cookies(path: "/cookies/set", query: ["courier-config-check": 1]))
                let echoed = try JSONSerialization.jsonObject(with: body) as? [String: Any]
                let cookies = echoed?["cookies"] as? [String: Any]
                #expect(cookies?.isEmpty == true, "\(String(decoding: body, as: UTF8.self))")
            }
        }

        @Test("a configuration's additional headers are sent, but not its credentials, nor invalid fields")
        func additionalHeaders() async throws {
            try await withTestServer { server in
                let configuration = URLSessionConfiguration.ephemeral
                configuration.httpAdditionalHeaders = [
                    "Authorization": "Bearer configured-secret", "Cookie": "session=configured",
                    "X-Api-Key": "configured-key",
                    "X-Configured": "yes", "X-Broken": "a\r\nX-Injected: 1", "Accept": "application/json",
                ]
                let transport = URLSessionTransport(configuration: configuration)
                let client = Client(server: Server(baseURL: server.baseURL), transport: transport)
                // URLSession added them to every request, also to another origin after a redirect, past Courier's
                // validation and its stripping of credentials.
                let body = try await client.send(Cookies(path: "/headers"))
                let echoed = try JSONSerialization.jsonObject(with: body) as? [String: Any]
                let headers = (echoed?["headers"] as? [String: Any])?.mapValues { "\($0)" } ?? [:]
                let names = Set(headers.keys.map { $0.lowercased() })
                #expect(!names.contains("authorization") && !names.contains("cookie"), "\(headers)")
                #expect(!names.contains("x-api-key"), "\(headers)")
                #expect(!names.contains("x-broken") && !names.contains("x-injected"), "\(headers)")
                #expect(headers.first { $0.key.lowercased() == "x-configured" }?.value == "yes", "\(headers)")
            }
        }
    }
}
