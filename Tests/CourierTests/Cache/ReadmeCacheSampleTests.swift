import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("README: caching")
struct ReadmeCacheSampleTests {
    struct GetArticle: Request {
        typealias Response = String
        var path: String { "/article" }
    }

    func cacheSample(plainClient: Client, cachesDirectory: URL) async throws -> CachedResponse<String> {
        // readme-cache:begin
        let cache = try HTTPCache(storage: .disk(directory: cachesDirectory, byteLimit: 50 << 20))  // or .memory()
        let client = plainClient.configured { $0.cache = cache }
        let article = try await client.sendWithCacheStatus(GetArticle())  // article.cacheStatus: hit, age 12 s, stale?
        // readme-cache:end
        return article
    }

    @Test("the README's cache sample compiles, matches, and serves the second call from the cache")
    func cacheSampleRuns() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/article", with: .text("cached", headerFields: [.cacheControl: "max-age=60"]))
        let plain = Client(server: Server(baseURL: URL(string: "https://api.example.com")!), transport: mock)
        let directory = CacheFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await cacheSample(plainClient: plain, cachesDirectory: directory)
        let second = try await cacheSample(plainClient: plain, cachesDirectory: directory)
        #expect(first.cacheStatus?.outcome == .miss)
        #expect(second.value == "cached" && second.cacheStatus?.outcome == .hit)

        let (readmeLines, sourceLines) = try ReadmeSampleTests.readmeAndSource(marker: "cache", testFile: #filePath)
        #expect(readmeLines == sourceLines)
    }
}
