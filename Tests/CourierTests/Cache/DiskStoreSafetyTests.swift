import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@testable import CourierCore

/// The disk store's privacy and sharing rules: owner-only files, credential partitions nobody can guess, one
/// store per directory across processes.
@Suite("Cache: disk store safety")
struct DiskStoreSafetyTests {
    private static let cacheable = CacheFixtures.fields(["Cache-Control": "max-age=60"])

    private static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require(attributes[.posixPermissions] as? Int) & 0o777
    }

    @Test("the directory is 0700, every file in it 0600, and a Basic credential is not guessable from any of them")
    func ownerOnlyAndUnguessable() async throws {
        let directory = CacheFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let authorization = "Basic " + Data("alice:password1".utf8).base64EncodedString()
        let harness = try CacheFixtures.harness(storage: .disk(directory: directory, byteLimit: 1 << 20))
        harness.mock.stub(.get, "/page", with: .text("body", headerFields: Self.cacheable))
        _ = try await harness.send(CacheFixtures.Page(headers: ["Authorization": authorization]))

        #expect(try Self.mode(directory.path) == 0o700)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files.contains(".partition-key") && files.contains(".lock"))
        #expect(try CacheFixtures.entryFiles(in: directory).count == 1)
        // Digests an attacker could compute from a guessed password, with or without the old fixed prefix.
        let guesses = [SHA256.hex(authorization), SHA256.hex("courier-cache-partition\n" + authorization)]
        for file in files {
            let path = directory.appendingPathComponent(file).path
            #expect(try Self.mode(path) == 0o600, "\(file)")
            let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
            for guess in guesses {
                #expect(!text.contains(guess) && !file.contains(guess), "\(file)")
            }
        }
    }

    @Test("the partition key survives a restart, so a signed entry is still found")
    func keySurvivesRestart() async throws {
        let directory = CacheFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let page = CacheFixtures.Page(headers: ["Authorization": "Bearer token-a"])
        do {
            let first = try CacheFixtures.harness(storage: .disk(directory: directory, byteLimit: 1 << 20))
            first.mock.stub(.get, "/page", with: .text("body", headerFields: Self.cacheable))
            _ = try await first.send(page)
        }
        let second = try CacheFixtures.harness(storage: .disk(directory: directory, byteLimit: 1 << 20))
        #expect(try await second.send(page).cacheStatus?.outcome == .hit)
    }

    @Test("opening a cache in a directory it shares (an app's Caches) leaves the other files and their mode alone")
    func sharedDirectoryKeepsOtherFiles() async throws {
        let directory = CacheFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let manager = FileManager.default
        let images = directory.appendingPathComponent("images")
        try manager.createDirectory(at: images, withIntermediateDirectories: true)
        try manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        let others = ["notes.txt", "thumbnails.cache", ".hidden", String(repeating: "a", count: 64) + ".cache.bak"]
        for name in others { try Data("not the cache's".utf8).write(to: directory.appendingPathComponent(name)) }
        try Data("a photo".utf8).write(to: images.appendingPathComponent("1.jpg"))
        // The cache's own leftovers: a corrupt entry and a temporary file from a crash mid-write.
        let hash = String(repeating: "0", count: 64)
        try Data("truncated".utf8).write(to: directory.appendingPathComponent(hash + ".cache"))
        try Data("partial".utf8).write(to: directory.appendingPathComponent(hash + ".cache.k3x9.tmp"))

        let harness = try CacheFixtures.harness(storage: .disk(directory: directory, byteLimit: 1 << 20))
        harness.mock.stub(.get, "/page", with: .text("body", headerFields: Self.cacheable))
        _ = try await harness.send(CacheFixtures.Page())
        #expect(try await harness.send(CacheFixtures.Page()).cacheStatus?.outcome == .hit)

        let names = Set(try manager.contentsOfDirectory(atPath: directory.path))
        for name in others + ["images"] { #expect(names.contains(name), "\(name) was deleted") }
        #expect(manager.fileExists(atPath: images.appendingPathComponent("1.jpg").path))
        #expect(!names.contains(hash + ".cache") && !names.contains(hash + ".cache.k3x9.tmp"))
        #expect(try CacheFixtures.entryFiles(in: directory).filter { $0 != "thumbnails.cache" }.count == 1)
        #expect(!names.contains { $0.hasSuffix(".tmp") })
        #expect(try Self.mode(directory.path) == 0o755)
    }

    @Test("an entry file that cannot be read for now is a miss and stays; a corrupt one is removed")
    func unreadableEntryStays() async throws {
        let directory = CacheFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let harness = try CacheFixtures.harness(storage: .disk(directory: directory, byteLimit: 1 << 20))
        let uncacheable = CacheFixtures.fields(["Cache-Control": "no-store"])
        harness.mock.stub(
            .get, "/page",
            with: [
                .text("v1", headerFields: Self.cacheable), .text("v2", headerFields: uncacheable),
                .text("v3", headerFields: uncacheable),
            ])
        _ = try await harness.send()
        let file = directory.appendingPathComponent(try #require(try CacheFixtures.entryFiles(in: directory).first))
        let aside = directory.appendingPathComponent("aside")

        // A read that fails (here a directory where the file was: EISDIR; on a device, a locked file): a miss.
        try FileManager.default.moveItem(at: file, to: aside)
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
        let unreadable = try await harness.send()
        #expect(unreadable.value == "v2" && unreadable.cacheStatus?.outcome == .miss)
        #expect(harness.cache.count == 1)

        // Readable again: the entry is still there.
        try FileManager.default.removeItem(at: file)
        try FileManager.default.moveItem(at: aside, to: file)
        let again = try await harness.send()
        #expect(again.value == "v1" && again.cacheStatus?.outcome == .hit)

        // Corrupt: removed, file and record.
        try Data("not an entry".utf8).write(to: file)
        let corrupt = try await harness.send()
        #expect(corrupt.value == "v3" && corrupt.cacheStatus?.outcome == .miss)
        #expect(harness.cache.count == 0 && !FileManager.default.fileExists(atPath: file.path))
    }

    @Test("a second cache on the same directory, in this process, fails with a clear error while the first is open")
    func secondCacheInProcess() throws {
        let directory = CacheFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try HTTPCache(storage: .disk(directory: directory, byteLimit: 1 << 20))
        let error = #expect(throws: CourierError.self) {
            _ = try HTTPCache(storage: .disk(directory: directory, byteLimit: 1 << 20))
        }
        #expect(error?.code == .unsupported)
        #expect(error?.message?.contains("in use by another HTTPCache") == true)
        withExtendedLifetime(first) {}
    }

    @Test("another process holding the directory keeps a cache out, and releases it when it exits")
    func secondProcess() throws {
        // Python plays the other process (found on PATH: scripts/test, which CI runs, needs it too). Without one,
        // the test fails rather than being cancelled, which a green run would not show.
        let python = "/usr/bin/env"
        let directory = CacheFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The other process opens a cache on the directory first (here: takes its lock as HTTPCache does).
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let other = Process()
        other.executableURL = URL(fileURLWithPath: python)
        other.arguments = [
            "python3", "-c",
            "import fcntl, sys; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB); "
                + "print('locked', flush=True); sys.stdin.read()",
            directory.appendingPathComponent(".lock").path,
        ]
        let input = Pipe()
        let output = Pipe()
        other.standardInput = input
        other.standardOutput = output
        try other.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        #expect(line.hasPrefix("locked"))

        #expect(throws: CourierError.self) {
            _ = try HTTPCache(storage: .disk(directory: directory, byteLimit: 1 << 20))
        }

        try input.fileHandleForWriting.close()
        other.waitUntilExit()
        let cache = try HTTPCache(storage: .disk(directory: directory, byteLimit: 1 << 20))
        #expect(cache.count == 0)

        // And the other way round: while this cache is open, the other process cannot take the directory.
        let late = Process()
        late.executableURL = URL(fileURLWithPath: python)
        late.arguments = [
            "python3", "-c",
            "import fcntl, sys; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)",
            directory.appendingPathComponent(".lock").path,
        ]
        late.standardError = Pipe()
        try late.run()
        late.waitUntilExit()
        // 1: Python's BlockingIOError (not 127, a Python that could not be started).
        #expect(late.terminationStatus == 1)
        withExtendedLifetime(cache) {}
    }
}
