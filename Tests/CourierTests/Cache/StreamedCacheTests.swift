import CourierTesting
import Foundation
import HTTPTypes
import Testing

@testable import CourierCore

/// A streamed response (``LiveResponse``, a download, a generated client's operation) goes through the cache too:
/// served from it while fresh, revalidated when stale, and stored when its reader reaches the end whole, within
/// ``HTTPCache/maxStreamedBodySize``.
@Suite("Cache: streamed responses")
struct StreamedCacheTests {
    struct Live: Request {
        typealias Response = LiveResponse
        var path: String { "/live" }
    }

    /// 10,000 bytes in 1,000-byte chunks, fresh for 60 s.
    static let body = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })

    static func response(_ pairs: KeyValuePairs<String, String> = ["Cache-Control": "max-age=60"]) -> MockResponse {
        var fields = CacheFixtures.fields(pairs)
        fields[.contentLength] = String(body.count)
        return MockResponse(headerFields: fields, body: body, chunkSize: 1_000)
    }

    static func read(_ live: LiveResponse) async throws -> Data {
        var data = Data()
        for try await chunk in live { data.append(contentsOf: chunk) }
        return data
    }

    @Test("read to its end, a streamed cacheable GET is stored; the next call is answered from the cache")
    func storedAtTheEnd() async throws {
        let harness = try CacheFixtures.harness()
        harness.mock.stub(.get, "/live", with: Self.response())
        let live = try await harness.client.send(Live())
        #expect(harness.cache.count == 0, "stored before the body was read")
        #expect(try await Self.read(live) == Self.body)
        #expect(harness.cache.count == 1)

        let again = try await harness.client.send(Live())
        #expect(again.head.headerFields[.age] == "0")
        #expect(try await Self.read(again) == Self.body)
        #expect(harness.networkCount == 1)
    }

    @Test("a streamed body read only in part is not stored")
    func partialReadIsNotStored() async throws {
        let harness = try CacheFixtures.harness()
        harness.mock.stub(.get, "/live", with: [Self.response(), Self.response()])
        for _ in 0..<2 {
            let live = try await harness.client.send(Live())
            for try await chunk in live {
                #expect(chunk.count == 1_000)
                break
            }
        }
        #expect(harness.cache.count == 0)
        #expect(harness.networkCount == 2)
    }

    @Test("a streamed body over maxStreamedBodySize reaches its reader whole and is not stored")
    func overTheLimitIsNotStored() async throws {
        let harness = try CacheFixtures.harness(maxStreamedBodySize: 4_096)
        harness.mock.stub(.get, "/live", with: [Self.response(), Self.response()])
        #expect(try await Self.read(harness.client.send(Live())) == Self.body)
        #expect(try await Self.read(harness.client.send(Live())) == Self.body)
        #expect(harness.cache.count == 0)
        #expect(harness.networkCount == 2)
    }

    @Test("a streamed body that fails midway is not stored, and the next call goes to the network")
    func failedStreamIsNotStored() async throws {
        let harness = try CacheFixtures.harness()
        var broken = Self.response()
        broken.fault = .resetMidBody(afterBytes: 2_500)
        harness.mock.stub(.get, "/live", with: [broken, Self.response()])
        let error = await expectCourierError { try await Self.read(harness.client.send(Live())) }
        #expect(error?.code == .connectionFailed)
        #expect(harness.cache.count == 0)
        #expect(try await Self.read(harness.client.send(Live())) == Self.body)
        #expect(harness.networkCount == 2)
        #expect(harness.cache.count == 1)
    }

    @Test("a streamed body shorter than its Content-Length is not stored")
    func shortBodyIsNotStored() async throws {
        let harness = try CacheFixtures.harness()
        var fields = CacheFixtures.fields(["Cache-Control": "max-age=60"])
        fields[.contentLength] = String(Self.body.count + 1)
        harness.mock.stub(.get, "/live", with: MockResponse(headerFields: fields, body: Self.body, chunkSize: 1_000))
        _ = try? await Self.read(harness.client.send(Live()))
        #expect(harness.cache.count == 0)
    }

    @Test("a stale streamed entry is revalidated: the 304 serves the stored body")
    func staleIsRevalidated() async throws {
        let harness = try CacheFixtures.harness()
        harness.mock.stub(
            .get, "/live",
            with: [
                Self.response(["Cache-Control": "max-age=1", "ETag": "\"v1\""]),
                .status(304, headerFields: CacheFixtures.fields(["ETag": "\"v1\""])),
            ])
        #expect(try await Self.read(harness.client.send(Live())) == Self.body)
        harness.time.advance(by: 10)
        #expect(try await Self.read(harness.client.send(Live())) == Self.body)
        #expect(harness.networkCount == 2)
        #expect(harness.mock.recordedRequests.last?.head.headerFields[.ifNoneMatch] == "\"v1\"")
    }

    @Test("a streamed response that may not be stored passes through untouched")
    func notStorablePassesThrough() async throws {
        let harness = try CacheFixtures.harness()
        let uncacheable = Self.response(["Cache-Control": "no-store"])
        harness.mock.stub(.get, "/live", with: [uncacheable, uncacheable])
        #expect(try await Self.read(harness.client.send(Live())) == Self.body)
        #expect(try await Self.read(harness.client.send(Live())) == Self.body)
        #expect(harness.cache.count == 0)
        #expect(harness.networkCount == 2)
    }
}
