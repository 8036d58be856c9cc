import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// Shared helpers for the cache suites: a settable "now", a text request with a cache policy, a client with a
/// cache on a `MockTransport`.
enum CacheFixtures {
    typealias Shared = DecisionFixtures.Shared

    static let start = Date(timeIntervalSince1970: 1_700_000_000)

    /// A settable "now" for the cache: freshness tests advance it instead of waiting.
    final class Time: Sendable {
        private let shared = Shared(CacheFixtures.start)

        var now: Date { shared.value }
        var closure: @Sendable () -> Date { { self.now } }

        func advance(by seconds: TimeInterval) { shared.update { $0 = $0.addingTimeInterval(seconds) } }
    }

    /// A text request with everything a cache test varies.
    struct Page: Request {
        typealias Response = String
        var method: HTTPRequest.Method = .get
        var path: String = "/page"
        var query: Parameters? = nil
        var headers: RequestHeaders = [:]
        var body: RequestBody? = nil
        var server: Server? = nil
        var authentication: AuthenticationRequirement = .optional
        var cachePolicy: CachePolicy = .useProtocolRules
        var lane: RequestLane = .standard
        var decisionList: [any Decision] = [.validateStatus()]
        var decisions: [any Decision] { decisionList }
    }

    /// Everything a client-level cache test needs.
    struct Harness {
        let client: Client
        let mock: MockTransport
        let cache: HTTPCache
        let time: Time
        let log: DecisionFixtures.LogCapture

        /// Sends `page` and returns the body and what the cache did.
        func send(_ page: Page = Page()) async throws -> CachedResponse<String> {
            try await client.sendWithCacheStatus(page)
        }

        /// How many requests reached the transport.
        var networkCount: Int { mock.recordedRequests.count }

        /// Stubs `GET path` to answer `body`, fresh for 60 s, once the gate it returns lets the request through.
        func stubGated(_ path: String, body: String) -> AuthFixtures.Gate {
            let gate = AuthFixtures.Gate()
            let fresh = CacheFixtures.fields(["Cache-Control": "max-age=60"])
            mock.stub(
                .get, path,
                handler: { _ in
                    await gate.pass()
                    return .text(body, headerFields: fresh)
                })
            return gate
        }
    }

    /// A store of one's own, in a dictionary: what the cache gives a store, as the store sees it.
    final class OwnStore: CacheStore {
        let partitionKey = [UInt8](repeating: 7, count: 32)
        private let stored = Shared<[CacheKey: CacheEntry]>([:])

        /// The entries stored.
        var entries: [CacheEntry] { Array(stored.value.values) }

        func entry(for key: CacheKey) async throws -> CacheEntry? { stored.value[key] }

        func store(_ entry: CacheEntry) async throws { stored.update { $0[entry.key] = entry } }

        func removeEntries(_ selection: CacheSelection) async throws {
            stored.update { entries in entries = entries.filter { !selection.contains($0.key) } }
        }
    }

    /// A client with an in-memory (or the given) cache whose clock is `time`.
    /// The entry files in a disk cache's directory (not its `.lock` and `.partition-key`).
    static func entryFiles(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".cache") }
    }

    static func harness(
        storage: HTTPCache.Storage = .memory(byteLimit: 1 << 20),
        servesStaleWhenOffline: Bool = true,
        maxStreamedBodySize: Int = 1 << 20,
        time: Time = Time(),
        configure: (inout Client.Configuration) -> Void = { _ in }
    ) throws -> Harness {
        let cache = try HTTPCache(
            storage: storage, servesStaleWhenOffline: servesStaleWhenOffline, maxStreamedBodySize: maxStreamedBodySize,
            now: time.closure)
        let log = DecisionFixtures.LogCapture()
        let (client, mock) = Fixtures.client { configuration in
            configuration.cache = cache
            configuration.logger = log.logger()
            configure(&configuration)
        }
        return Harness(client: client, mock: mock, cache: cache, time: time, log: log)
    }

    /// Response header fields from pairs, with a `Date` of `date` (the fixture's start by default).
    static func fields(_ pairs: KeyValuePairs<String, String>, date: Date? = start) -> HTTPFields {
        var fields = HTTPFields()
        if let date { fields[.date] = httpDate(date) }
        for (name, value) in pairs {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        return fields
    }

    /// `date` as an IMF-fixdate.
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    /// Runs `body` with a harness whose cache is in memory or, `onDisk`, in a fresh temporary directory (the second
    /// argument), removed afterwards.
    static func withHarness(onDisk: Bool, _ body: (Harness, URL) async throws -> Void) async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let storage: HTTPCache.Storage =
            onDisk ? .disk(directory: directory, byteLimit: 1 << 20) : .memory(byteLimit: 1 << 20)
        try await body(try harness(storage: storage), directory)
    }

    /// A fresh temporary directory for a disk cache.
    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-\(UUID().uuidString)")
    }

    /// A connection failure, as a transport reports the origin being down.
    static let originDown = CourierError(code: .connectionFailed, stage: .transport, message: "connection refused")
}
