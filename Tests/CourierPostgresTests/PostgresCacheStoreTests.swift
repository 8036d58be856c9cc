import Courier
import CourierCore
import CourierPostgres
import CourierTestServer
import Crypto
import Foundation
import HTTPTypes
import PostgresNIO
import Testing

@Suite("PostgresCacheStore: one HTTP cache shared by instances", .serialized, .timeLimit(.minutes(1)))
struct PostgresCacheStoreTests {
    struct Cached: Request {
        typealias Response = Data
        var path: String
        var authorization: String?
        var headers: RequestHeaders { authorization.map { ["Authorization": $0] } ?? [:] }
    }

    struct Invalidate: Request {
        typealias Response = Data
        var path: String
        var method: HTTPRequest.Method { .post }
    }

    /// Two instances (two caches, two clients) on one namespace, against one server.
    func withTwoInstances(
        byteLimit: Int = 1 << 20, maximumEntrySize: Int = 1 << 16,
        _ body: @Sendable (Client, Client, PostgresCacheStore, TestServer) async throws -> Void
    ) async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.shutdown() } }
        let namespace = PostgresLab.uniqueName("cache")
        let key = SymmetricKey(size: .bits256)
        try await PostgresLab.withClient { postgres in
            func instance() -> (Client, PostgresCacheStore) {
                let store = PostgresCacheStore(
                    client: postgres, namespace: namespace, key: key, byteLimit: byteLimit,
                    maximumEntrySize: maximumEntrySize)
                let cache = HTTPCache(store: store)
                return (Client(baseURL: server.baseURL).configured { $0.cache = cache }, store)
            }
            let (a, store) = instance()
            let (b, _) = instance()
            try await body(a, b, store, server)
        }
    }

    @Test("instance A stores, instance B hits without a request")
    func sharedHit() async throws {
        try await withTwoInstances { a, b, _, server in
            let first = try await a.sendWithCacheStatus(Cached(path: "/cache/60"))
            #expect(first.cacheStatus?.outcome == .miss)
            let requests = server.requestCount
            let second = try await b.sendWithCacheStatus(Cached(path: "/cache/60"))
            #expect(second.cacheStatus?.outcome == .hit)
            #expect(second.value == first.value)
            #expect(server.requestCount == requests)
        }
    }

    @Test("an unsafe method on A invalidates the entry for B")
    func invalidationSeenByOthers() async throws {
        try await withTwoInstances { a, b, _, server in
            _ = try await a.send(Cached(path: "/cache/60"))
            #expect(try await b.sendWithCacheStatus(Cached(path: "/cache/60")).cacheStatus?.outcome == .hit)
            _ = try await a.send(Invalidate(path: "/cache/60"))
            let requests = server.requestCount
            let after = try await b.sendWithCacheStatus(Cached(path: "/cache/60"))
            #expect(after.cacheStatus?.outcome == .miss)
            #expect(server.requestCount == requests + 1)
        }
    }

    @Test("credential partitions: an entry signed with one token is not served to another")
    func partitionsKept() async throws {
        try await withTwoInstances { a, b, _, _ in
            let alice = Cached(path: "/cache/60", authorization: "Bearer alice")
            let bob = Cached(path: "/cache/60", authorization: "Bearer bob")
            _ = try await a.send(alice)
            #expect(try await b.sendWithCacheStatus(alice).cacheStatus?.outcome == .hit)
            #expect(try await b.sendWithCacheStatus(bob).cacheStatus?.outcome == .miss)
        }
    }

    @Test("a body over the size threshold is not stored; the byte budget evicts the least recently used")
    func limits() async throws {
        try await withTwoInstances(byteLimit: 3000, maximumEntrySize: 1500) { a, b, store, _ in
            _ = try await a.send(Cached(path: "/cache/60?pad=" + String(repeating: "x", count: 2000)))
            #expect(try await store.usage().count == 0)
            for index in 0..<6 { _ = try await a.send(Cached(path: "/cache/6\(index)")) }
            let usage = try await store.usage()
            print("shared cache after 6 stores under a 3000-byte budget: \(usage.count) entries, \(usage.bytes) bytes")
            #expect(usage.bytes <= 3000)
            #expect(usage.count >= 1 && usage.count < 6)
            // The newest survives, the oldest went first.
            let newest = try await b.sendWithCacheStatus(Cached(path: "/cache/65"))
            #expect(newest.cacheStatus?.outcome == .hit)
            #expect(try await b.sendWithCacheStatus(Cached(path: "/cache/60")).cacheStatus?.outcome == .miss)
        }
    }
}
