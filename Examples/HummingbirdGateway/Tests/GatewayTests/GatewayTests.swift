import CourierTestServer
import Foundation
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

// The example's package builds the gateway as a module of its own; Courier's test target compiles it with this file.
#if canImport(Gateway)
    import Gateway
#endif

/// The README's Hummingbird recipe, run: the gateway's route calls a real upstream (the embedded server) that wants
/// a client-credentials token, fails once with 503 and then answers with a cacheable user.
@Suite("Hummingbird gateway on Courier", .timeLimit(.minutes(1)))
struct GatewayTests {
    /// What the upstream saw.
    final class Upstream: Sendable {
        let tokenRequests = Mutex<[String]>([])
        let userRequests = Mutex<[String]>([])
    }

    @Test("a route calls the upstream with a service token, retries its 503, and serves the repeat from cache")
    func gateway() async throws {
        let server = try await TestServer.start()
        let upstream = Upstream()
        server.register("POST", "/oauth/token") { request in
            upstream.tokenRequests.withLock { $0.append(request.header("Authorization") ?? "") }
            return .json(#"{"access_token": "service-token-1", "token_type": "Bearer", "expires_in": 3600}"#)
        }
        server.register("GET", "/users/42") { request in
            let count = upstream.userRequests.withLock {
                $0.append(request.header("Authorization") ?? "")
                return $0.count
            }
            guard request.header("Authorization") == "Bearer service-token-1" else { return .text("", status: 401) }
            if count == 1 { return .text("try again", status: 503) }
            var response = TestServerResponse.json(#"{"id": 42, "name": "Ada"}"#)
            response.headers.append((name: "Cache-Control", value: "max-age=60"))
            return response
        }
        do {
            let router = try await makeRouter(upstream: server.baseURL, clientID: "gate way", clientSecret: "s3cr:t")
            let app = Application(router: router)
            try await app.test(.router) { client in
                for _ in 0..<2 {
                    try await client.execute(uri: "/users/42", method: .get) { response in
                        #expect(response.status == .ok)
                        #expect(
                            String(buffer: response.body).contains(#""name":"Ada""#), "\(String(buffer: response.body))"
                        )
                    }
                }
                try await client.execute(uri: "/users/7", method: .get) { response in
                    #expect(response.status == .notFound)
                }
            }
            // "gate way" and "s3cr:t" encoded (RFC 6749 §2.3.1; the space as %20, which every decoder reads),
            // then Base64.
            #expect(
                upstream.tokenRequests.withLock { $0 } == [
                    "Basic " + Data("gate%20way:s3cr%3At".utf8).base64EncodedString()
                ])
            // The 503, its retry, and nothing for the second call: it came from the cache.
            #expect(upstream.userRequests.withLock { $0 } == Array(repeating: "Bearer service-token-1", count: 2))
            try await server.shutdown()
        } catch {
            try? await server.shutdown()
            throw error
        }
    }
}
