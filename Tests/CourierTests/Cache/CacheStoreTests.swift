import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// Memory and disk storage: byte limits, LRU eviction, restarts, corrupt and half-written entries.
@Suite("HTTPCache: storage", .timeLimit(.minutes(1)))
struct CacheStoreTests {
    typealias Page = CacheFixtures.Page

    private static let cacheable = CacheFixtures.fields(["Cache-Control": "max-age=600"])

    /// Stubs `/a`, `/b`, … with `size`-byte cacheable bodies.
    private func stubPages(_ mock: MockTransport, _ names: [String], size: Int) {
        for name in names {
            mock.stub(
                .get, "/\(name)",
                handler: { _ in .text(String(repeating: name, count: size), headerFields: Self.cacheable) })
        }
    }

    @Test("memory: least recently used entries go first once the byte limit is crossed")
    func memoryLRU() async throws {
        let harness = try CacheFixtures.harness(storage: .memory(byteLimit: 3 * 1500))
        stubPages(harness.mock, ["a", "b", "c", "d"], size: 1000)
        for name in ["a", "b", "c"] { _ = try await harness.send(Page(path: "/\(name)")) }
        #expect(harness.cache.count == 3)
        _ = try await harness.send(Page(path: "/a"))  // a is now the most recently used
        _ = try await harness.send(Page(path: "/d"))  // evicts b
        #expect(harness.cache.count == 3)
        #expect(harness.cache.totalBytes <= 3 * 1500)
        #expect(try await harness.send(Page(path: "/a")).cacheStatus?.outcome == .hit)
        #expect(try await harness.send(Page(path: "/b")).cacheStatus?.outcome == .miss)
    }

    @Test("memory: a response larger than the whole limit is not stored")
    func memoryTooLarge() async throws {
        let harness = try CacheFixtures.harness(storage: .memory(byteLimit: 500))
        stubPages(harness.mock, ["a"], size: 1000)
        _ = try await harness.send(Page(path: "/a"))
        #expect(harness.cache.count == 0)
    }

    @Test("disk: entries survive a restart (a new cache on the same directory)")
    func diskSurvivesRestart() async throws {
        let directory = CacheFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let time = CacheFixtures.Time()
        do {  // the first cache closes (and releases the directory) at the end of this scope
            let first = try CacheFixtures.harness(
                storage: .disk(directory: directory, byteLimit: 1 << 20), time: time)
            first.mock.stub(
                .get, "/page",
                with: .text(
                    "persisted", headerFields: CacheFixtures.fields(["Cache-Control": "max-age=600", "X-Kept": "yes"])))
            _ = try await first.send()
        }
        let second = try CacheFixtures.harness(storage: .disk(directory: directory, byteLimit: 1 << 20), time: time)
        #expect(second.cache.count == 1)
        let served = try await second.send()
        #expect(served.value == "persisted" && served.cacheStatus?.outcome == .hit)
        #expect(second.networkCount == 0)
    }

    @Test(
        "disk: a corrupt or half-written entry is detected and dropped, never served",
        arguments: ["flip", "truncate", "empty", "garbage"])
    func diskCorruption(damage: String) async throws {
        let directory = CacheFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var file = directory
        var bytes = Data()
        do {
            let harness = try CacheFixtures.harness(storage: .disk(directory: directory, byteLimit: 1 << 20))
            harness.mock.stub(.get, "/page", handler: { _ in .text("original body", headerFields: Self.cacheable) })
            _ = try await harness.send()
            file = directory.appendingPathComponent(try #require(try CacheFixtures.entryFiles(in: directory).first))
            bytes = try Data(contentsOf: file)
            switch damage {
            case "flip": bytes[bytes.count - 3] ^= 0x01
            case "truncate": bytes = bytes.prefix(bytes.count - 5)
            case "empty": bytes = Data()
            default: bytes = Data("not a cache entry at all".utf8)
            }
            try bytes.write(to: file)
            // The live cache drops it on lookup…
            let served = try await harness.send()
            #expect(served.cacheStatus?.outcome == .miss)
            #expect(harness.networkCount == 2)
        }
        // …and a restarted cache (the first one is gone, and its lock with it) drops it while indexing.
        try bytes.write(to: file)
        let restarted = try HTTPCache(storage: .disk(directory: directory, byteLimit: 1 << 20))
        #expect(restarted.count == 0)
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test("disk: temporary files left by a crash mid-write are removed at start")
    func diskLeftovers() throws {
        let directory = CacheFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let leftover = directory.appendingPathComponent(String(repeating: "ab", count: 32) + ".cache.1z2y.tmp")
        try Data("half".utf8).write(to: leftover)
        let cache = try HTTPCache(storage: .disk(directory: directory, byteLimit: 1 << 20))
        #expect(cache.count == 0)
        #expect(!FileManager.default.fileExists(atPath: leftover.path))
    }

    @Test("disk: the byte limit evicts least recently used files")
    func diskLRU() async throws {
        let directory = CacheFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let harness = try CacheFixtures.harness(storage: .disk(directory: directory, byteLimit: 3 * 1400))
        stubPages(harness.mock, ["a", "b", "c", "d"], size: 1000)
        for name in ["a", "b", "c", "a", "d"] { _ = try await harness.send(Page(path: "/\(name)")) }
        #expect(harness.cache.count == 3)
        #expect(harness.cache.totalBytes <= 3 * 1400)
        #expect(try CacheFixtures.entryFiles(in: directory).count == 3)
        #expect(try await harness.send(Page(path: "/b")).cacheStatus?.outcome == .miss)
    }

    @Test("row 37: no-store leaves nothing on disk")
    func noStoreOnDisk() async throws {
        let directory = CacheFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let harness = try CacheFixtures.harness(storage: .disk(directory: directory, byteLimit: 1 << 20))
        harness.mock.stub(
            .get, "/page",
            handler: { _ in .text("x", headerFields: CacheFixtures.fields(["Cache-Control": "no-store"])) })
        _ = try await harness.send()
        _ = try await harness.send(Page(path: "/page", headers: ["Cache-Control": "no-store"]))
        #expect(try CacheFixtures.entryFiles(in: directory).isEmpty)
    }

    @Test("removeAll and removeEntries(for:) empty the cache")
    func removal() async throws {
        let harness = try CacheFixtures.harness()
        stubPages(harness.mock, ["a", "b"], size: 10)
        _ = try await harness.send(Page(path: "/a"))
        _ = try await harness.send(Page(path: "/b"))
        harness.cache.removeEntries(for: try #require(URL(string: "https://api.example.com/a")))
        #expect(harness.cache.count == 1)
        harness.cache.removeAll()
        #expect(harness.cache.count == 0 && harness.cache.totalBytes == 0)
    }
}
