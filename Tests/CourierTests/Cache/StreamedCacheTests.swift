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
        #expect(error?.code == .truncatedResponse)
        #expect(harness.cache.count == 0)
        #expect(try await Self.read(harness.client.send(Live())) == Self.body)
        #expect(harness.networkCount == 2)
        #expect(harness.cache.count == 1)
    }

    @Test("the client's maxResponseBodySize bounds the copy too (it does not bound a live body)")
    func clientLimitBoundsTheCopy() async throws {
        let harness = try CacheFixtures.harness { $0.maxResponseBodySize = 5_000 }
        var fields = CacheFixtures.fields(["Cache-Control": "max-age=60"])
        fields[.contentLength] = nil
        let unannounced = MockResponse(headerFields: fields, body: Self.body, chunkSize: 1_000)
        harness.mock.stub(.get, "/live", with: unannounced)
        #expect(try await Self.read(harness.client.send(Live())) == Self.body)
        #expect(harness.cache.count == 0)
    }

    @Test("a stream that ends after the cache removed entries (a sign-out, a purge) is not stored")
    func removalDuringTheStreamWins() async throws {
        let harness = try CacheFixtures.harness()
        harness.mock.stub(.get, "/live", with: Self.response())
        let live = try await harness.client.send(Live())
        harness.cache.removeAll()  // as a sign-out does, while the body is still being read
        #expect(try await Self.read(live) == Self.body)
        #expect(harness.cache.count == 0)
    }

    @Test("CachingBody: reading on after a failure never stores what arrived before it")
    func readingOnAfterAFailure() async throws {
        // A stream that fails after one chunk, then reports its end to a reader that asks again.
        let stream = AsyncThrowingStream<ArraySlice<UInt8>, any Error> { continuation in
            continuation.yield(ArraySlice(Self.body.prefix(1_000)))
            continuation.finish(throwing: CacheFixtures.originDown)
        }
        let stores = LockedBox(0)
        let body = CachingBody(
            MessageBody(stream, length: .unknown, iterationBehavior: .single), limit: 1 << 20, expected: nil
        ) { _ in stores.withLock { $0 += 1 } }
        var iterator = body.makeAsyncIterator()
        #expect(try await iterator.next()?.count == 1_000)
        await #expect(throws: CourierError.self) { _ = try await iterator.next() }
        #expect(try await iterator.next() == nil)
        #expect(stores.withLock { $0 } == 0)
    }

    @Test("CachingBody: a body read to its end is handed to the store once, whole")
    func storedOnceAtTheEnd() async throws {
        let stored = LockedBox<[Data]>([])
        let body = CachingBody(
            MessageBody(
                AsyncStream { continuation in
                    for chunk in Self.body.chunked(1_000) { continuation.yield(chunk) }
                    continuation.finish()
                }, length: .unknown, iterationBehavior: .single),
            limit: 1 << 20, expected: nil
        ) { data in stored.withLock { $0.append(data) } }
        var iterator = body.makeAsyncIterator()
        while try await iterator.next() != nil {}
        #expect(try await iterator.next() == nil)
        #expect(stored.withLock { $0 } == [Self.body])
    }

    @Test("an event stream is never stored, even with a lifetime")
    func eventStreamIsNotStored() async throws {
        let harness = try CacheFixtures.harness()
        let events = MockResponse(
            headerFields: CacheFixtures.fields(["Cache-Control": "max-age=60", "Content-Type": "text/event-stream"]),
            body: Data("data: one\n\ndata: two\n\n".utf8), chunkSize: 8)
        harness.mock.stub(.get, "/live", with: [events, events])
        for _ in 0..<2 { _ = try await Self.read(harness.client.send(Live())) }
        #expect(harness.cache.count == 0)
        #expect(harness.networkCount == 2)
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

extension Data {
    /// The bytes in chunks of `size`.
    fileprivate func chunked(_ size: Int) -> [ArraySlice<UInt8>] {
        stride(from: 0, to: count, by: size).map { ArraySlice(self[$0..<Swift.min($0 + size, count)]) }
    }
}
