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
    }
}
