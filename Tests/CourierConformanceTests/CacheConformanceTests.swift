import Courier
import CourierAsyncHTTPClient
import CourierTestServer
import Foundation
import HTTPTypes
import Testing

extension Conformance {
    /// The cache over real sockets: the embedded server and a real httpbin's `/cache`, `/cache/{n}`, `/etag/{etag}`
    /// and `/response-headers` (reliability rows 37, 39, 40), on every transport.
    @Suite("Conformance: HTTP cache", .timeLimit(.minutes(2)))
    struct CacheConformanceTests {
        /// A client on `baseURL` with a fresh in-memory cache.
        private func cachingClient(_ transport: TransportKind, _ baseURL: URL) -> Client {
            makeClient(transport, baseURL) { $0.cache = .memory() }
        }

        private func get(
            _ client: Client,
            _ path: String,
            query: Parameters? = nil,
            headers: RequestHeaders = [:]
        ) async throws -> CachedResponse<Data> {
            try await client.sendWithCacheStatus(RawGet(path: path, query: query, headers: headers))
        }

        /// A GET whose body is returned as bytes.
        private struct RawGet: Request {
            typealias Response = Data
            var path: String
            var query: Parameters?
            var headers: RequestHeaders
        }

        @Test(
            "/cache/{n}: the second GET is a fresh hit with the same body", arguments: TransportKind.all, ServerKind.all
        )
        func cacheSeconds(transport: TransportKind, server: ServerKind) async throws {
            try await server.withBaseURL { baseURL in
                let client = cachingClient(transport, baseURL)
                let first = try await get(client, "/cache/60")
                #expect(first.cacheStatus?.outcome == .miss)
                let second = try await get(client, "/cache/60")
                #expect(second.cacheStatus?.outcome == .hit)
                #expect(second.value == first.value)
            }
        }

        @Test(
            "row 40: /etag/{etag}: the stored ETag is sent as If-None-Match; the 304 serves the stored body",
            arguments: TransportKind.all, ServerKind.all)
        func etagRevalidation(transport: TransportKind, server: ServerKind) async throws {
            try await server.withBaseURL { baseURL in
                let client = cachingClient(transport, baseURL)
                let first = try await get(client, "/etag/courier-v1")
                #expect(first.cacheStatus?.outcome == .miss)
                let second = try await get(client, "/etag/courier-v1")
                #expect(second.cacheStatus?.outcome == .revalidated)
                #expect(second.value == first.value)
                #expect(!second.value.isEmpty)
            }
        }

        @Test(
            "row 40: /cache: validators from Last-Modified and ETag; the origin's 304 is merged",
            arguments: TransportKind.all, ServerKind.all)
        func cacheRevalidation(transport: TransportKind, server: ServerKind) async throws {
            try await server.withBaseURL { baseURL in
                let client = cachingClient(transport, baseURL)
                let first = try await get(client, "/cache")
                let second = try await get(client, "/cache", headers: ["Cache-Control": "no-cache"])
                #expect(second.cacheStatus?.outcome == .revalidated)
                #expect(second.value == first.value)
            }
        }

        @Test("row 37: /response-headers with no-store: nothing stored", arguments: TransportKind.all, ServerKind.all)
        func noStore(transport: TransportKind, server: ServerKind) async throws {
            try await server.withBaseURL { baseURL in
                let cache = HTTPCache.memory()
                let client = makeClient(transport, baseURL) { $0.cache = cache }
                let query: Parameters = ["Cache-Control": "no-store, max-age=600"]
                _ = try await get(client, "/response-headers", query: query)
                #expect(cache.count == 0)
                #expect(try await get(client, "/response-headers", query: query).cacheStatus?.outcome == .miss)
            }
        }

        @Test(
            "row 39: /response-headers with Vary: Accept-Language: variants never mixed",
            arguments: TransportKind.all, ServerKind.all)
        func vary(transport: TransportKind, server: ServerKind) async throws {
            try await server.withBaseURL { baseURL in
                let client = cachingClient(transport, baseURL)
                let query: Parameters = ["Cache-Control": "max-age=600", "Vary": "Accept-Language"]
                _ = try await get(client, "/response-headers", query: query, headers: ["Accept-Language": "en"])
                let english = try await get(
                    client, "/response-headers", query: query, headers: ["Accept-Language": "en"])
                #expect(english.cacheStatus?.outcome == .hit)
                let french = try await get(
                    client, "/response-headers", query: query, headers: ["Accept-Language": "fr"])
                #expect(french.cacheStatus?.outcome == .miss)
                let star: Parameters = ["Cache-Control": "max-age=600", "Vary": "*"]
                _ = try await get(client, "/response-headers", query: star)
                #expect(try await get(client, "/response-headers", query: star).cacheStatus?.outcome == .miss)
            }
        }

        @Test("row 38: two credentials never share an entry", arguments: TransportKind.all, ServerKind.all)
        func partitioned(transport: TransportKind, server: ServerKind) async throws {
            try await server.withBaseURL { baseURL in
                let client = cachingClient(transport, baseURL)
                _ = try await get(client, "/cache/60", headers: ["Authorization": "Bearer alice"])
                let bob = try await get(client, "/cache/60", headers: ["Authorization": "Bearer bob"])
                #expect(bob.cacheStatus?.outcome == .miss)
                #expect(String(decoding: bob.value, as: UTF8.self).contains("Bearer bob"))
            }
        }

        @Test(
            "offline: the origin goes down; the stale entry is served, but not a must-revalidate one")
        func offline() async throws {
            let server = try await TestServer.start()
            // A refused connection is retried by AsyncHTTPClient's pool until its connect timeout: keep it short.
            let transport = AsyncHTTPClientTransport(configuration: .init(connectTimeout: .milliseconds(300)))
            let client = Client(
                server: Server(baseURL: server.baseURL), transport: transport,
                configuration: Client.Configuration(retryPolicy: .disabled)
            ).configured { $0.cache = .memory() }
            let stale: Parameters = ["Cache-Control": "max-age=0"]
            let strict: Parameters = ["Cache-Control": "max-age=0, must-revalidate"]
            let first = try await get(client, "/response-headers", query: stale)
            _ = try await get(client, "/response-headers", query: strict)
            try await server.shutdown()
            let served = try await get(client, "/response-headers", query: stale)
            #expect(served.cacheStatus?.outcome == .stale)
            #expect(served.value == first.value)
            await #expect(throws: CourierError.self) { try await get(client, "/response-headers", query: strict) }
        }

        @Test("a fresh hit never reaches the embedded server", arguments: TransportKind.all)
        func hitSkipsServer(transport: TransportKind) async throws {
            let server = try await TestServer.start()
            let client = cachingClient(transport, server.baseURL)
            _ = try await get(client, "/cache/60")
            let before = server.requestCount
            for _ in 0..<5 { _ = try await get(client, "/cache/60") }
            #expect(server.requestCount == before)
            try await server.shutdown()
        }

        @Test(
            "a 304 whose ETag is not the stored one updates nothing: the entry is dropped and the GET sent again whole",
            arguments: TransportKind.all)
        func mismatchedNotModified(transport: TransportKind) async throws {
            try await withTestServer { server in
                let seen = Conditions()
                server.register("GET", "/versioned") { request in
                    let condition = request.header("If-None-Match")
                    switch await seen.record(condition) {
                    case 1:
                        return TestServerResponse(
                            headers: [("ETag", "\"v1\""), ("Cache-Control", "no-cache")], body: Array("one".utf8))
                    case 2:
                        // An inconsistent server: "not modified", naming a representation the client never stored.
                        return TestServerResponse(
                            status: 304, headers: [("ETag", "\"v2\""), ("Cache-Control", "max-age=600")])
                    default:
                        return TestServerResponse(
                            headers: [("ETag", "\"v2\""), ("Cache-Control", "max-age=600")], body: Array("two".utf8))
                    }
                }
                let client = cachingClient(transport, server.baseURL)
                let first = try await get(client, "/versioned")
                #expect(String(decoding: first.value, as: UTF8.self) == "one")
                let second = try await get(client, "/versioned")
                #expect(String(decoding: second.value, as: UTF8.self) == "two")
                #expect(second.cacheStatus?.outcome == .miss)
                #expect(await seen.conditions == [nil, "\"v1\"", nil])
                // What is stored now is the second representation, fresh.
                let third = try await get(client, "/versioned")
                #expect(String(decoding: third.value, as: UTF8.self) == "two")
                #expect(third.cacheStatus?.outcome == .hit)
            }
        }

        @Test(
            "a response to one API key, cookie or custom credential header is never served to another, or to none",
            arguments: TransportKind.all)
        func partitionedByOtherCredentials(transport: TransportKind) async throws {
            try await withTestServer { server in
                // The body names the credentials the request carried; every response is fresh for 10 minutes.
                server.register("GET", "/mine") { request in
                    let names = ["X-Api-Key", "Cookie", "X-Tenant-Key"]
                    let carried = names.compactMap { name in request.header(name).map { "\(name)=\($0)" } }
                    return TestServerResponse(
                        headers: [("Cache-Control", "max-age=600")], body: Array(carried.joined(separator: ";").utf8))
                }
                var redactor = Redactor.default
                redactor.sensitiveHeaderNames.insert(try #require(HTTPField.Name("X-Tenant-Key")))
                let client = makeClient(transport, server.baseURL) {
                    $0.cache = .memory()
                    $0.redactor = redactor
                }
                let cases: [(RequestHeaders, String)] = [
                    (["X-Api-Key": "alpha"], "X-Api-Key=alpha"),
                    (["X-Api-Key": "beta"], "X-Api-Key=beta"),
                    ([:], ""),
                    (["Cookie": "session=1"], "Cookie=session=1"),
                    (["Cookie": "session=2"], "Cookie=session=2"),
                    (["X-Tenant-Key": "t1"], "X-Tenant-Key=t1"),
                    (["X-Tenant-Key": "t2"], "X-Tenant-Key=t2"),
                ]
                for (headers, expected) in cases {
                    let response = try await get(client, "/mine", headers: headers)
                    #expect(String(decoding: response.value, as: UTF8.self) == expected, "\(headers)")
                    #expect(response.cacheStatus?.outcome == .miss, "\(headers)")
                }
                // Each one's own entry is still there for it.
                for (headers, expected) in cases {
                    let response = try await get(client, "/mine", headers: headers)
                    #expect(String(decoding: response.value, as: UTF8.self) == expected, "\(headers)")
                    #expect(response.cacheStatus?.outcome == .hit, "\(headers)")
                }
            }
        }

        /// The `If-None-Match` of each request a route saw, in order.
        actor Conditions {
            private(set) var conditions: [String?] = []
            func record(_ condition: String?) -> Int {
                conditions.append(condition)
                return conditions.count
            }
        }
    }
}
