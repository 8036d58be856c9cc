import Courier
import CourierCore
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// RFC 5861, the offline fallback, must-revalidate (row 40) and the per-request cache policies.
@Suite("HTTPCache: stale responses and policies", .timeLimit(.minutes(1)))
struct CacheStalenessTests {
    typealias Page = CacheFixtures.Page

    /// Stores one response at `/page` with `cacheControl`, then makes it stale by `seconds` past its max-age.
    private func storedThenStale(
        _ cacheControl: String,
        by seconds: TimeInterval = 5,
        servesStaleWhenOffline: Bool = true,
        retrying: Bool = false
    ) async throws -> CacheFixtures.Harness {
        let harness = try CacheFixtures.harness(servesStaleWhenOffline: servesStaleWhenOffline) { configuration in
            if retrying { configuration.retryPolicy = RetryPolicy(backoff: .none) }
        }
        harness.mock.stub(
            .get, "/page", with: .text("stored", headerFields: CacheFixtures.fields(["Cache-Control": cacheControl])))
        _ = try await harness.send()
        harness.time.advance(by: 10 + seconds)
        return harness
    }

    @Test("offline: when the network fails, the last good response is served, marked stale")
    func offlineFallback() async throws {
        let harness = try await storedThenStale("max-age=10")
        harness.mock.stub(.get, "/page", with: .status(200, fault: .failBeforeResponse(CacheFixtures.originDown)))
        let served = try await harness.send()
        #expect(served.value == "stored")
        #expect(served.cacheStatus?.outcome == .stale)
        #expect(served.cacheStatus?.isStale == true)
        #expect(served.cacheStatus?.age == .seconds(15))
        #expect(harness.log.messages.last?.contains("cache stale") == true)
    }

    @Test("a reset on the first attempt (a closed keep-alive connection) is retried, not answered as offline")
    func firstResetIsRetriedBeforeServingStale() async throws {
        let harness = try await storedThenStale("max-age=10", retrying: true)
        let reset = CourierError(code: .connectionReset, stage: .transport, message: "connection reset by peer")
        harness.mock.stub(
            .get, "/page",
            with: [
                .status(200, fault: .failBeforeResponse(reset)),
                .text("fresh", headerFields: CacheFixtures.fields(["Cache-Control": "max-age=10"])),
            ])
        let served = try await harness.send()
        #expect(served.value == "fresh")
        #expect(served.cacheStatus?.isStale == false)
        #expect(harness.networkCount == 3, "the first store, the reset, the retry")
    }

    @Test("a reset on a client that does not retry: the last good response is served at once, marked stale")
    func resetWithoutRetriesServesStale() async throws {
        let harness = try await storedThenStale("max-age=10")
        let reset = CourierError(code: .connectionReset, stage: .transport, message: "connection reset by peer")
        harness.mock.stub(.get, "/page", with: .status(200, fault: .failBeforeResponse(reset)))
        let served = try await harness.send()
        #expect(served.value == "stored" && served.cacheStatus?.outcome == .stale)
        #expect(harness.networkCount == 2)
    }

    @Test("a reset on a client whose policy does not retry transport failures: the stored response, at once")
    func resetWithoutTransportRetriesServesStale() async throws {
        let harness = try CacheFixtures.harness { configuration in
            configuration.retryPolicy = RetryPolicy(backoff: .none, retriesTransportFailures: false)
        }
        harness.mock.stub(
            .get, "/page", with: .text("stored", headerFields: CacheFixtures.fields(["Cache-Control": "max-age=10"])))
        _ = try await harness.send()
        harness.time.advance(by: 15)
        let reset = CourierError(code: .connectionReset, stage: .transport, message: "connection reset by peer")
        harness.mock.stub(.get, "/page", with: .status(200, fault: .failBeforeResponse(reset)))
        let served = try await harness.send()
        #expect(served.value == "stored" && served.cacheStatus?.outcome == .stale)
        #expect(harness.networkCount == 2)
    }

    @Test("resets on every attempt: the last good response is served, marked stale, after the retries")
    func resetsOnEveryAttemptServeStale() async throws {
        let harness = try await storedThenStale("max-age=10", retrying: true)
        let reset = CourierError(code: .connectionReset, stage: .transport, message: "connection reset by peer")
        harness.mock.stub(.get, "/page", with: .status(200, fault: .failBeforeResponse(reset)))
        let served = try await harness.send()
        #expect(served.value == "stored")
        #expect(served.cacheStatus?.outcome == .stale)
        #expect(harness.networkCount == 3, "the first store, the reset, the retry that also failed")
    }

    @Test(
        "a 5xx, 408 or 429 answering a revalidation keeps the stored entry: the device offline then gets it",
        arguments: [502, 503, 408, 429])
    func serverErrorKeepsEntry(status: Int) async throws {
        let harness = try await storedThenStale("max-age=10")
        let offline = LockedFlag()
        harness.mock.stub(
            .get, "/page",
            handler: { _ in
                offline.isSet
                    ? .status(200, fault: .failBeforeResponse(CacheFixtures.originDown)) : .text("busy", status: status)
            })
        let error = await expectCourierError { try await harness.send() }
        #expect(error?.code == .unacceptableStatus)
        offline.set()
        let served = try await harness.send()
        #expect(served.value == "stored")
        #expect(served.cacheStatus?.outcome == .stale)
    }

    @Test("a private cache ignores proxy-revalidate: offline, the stale entry is served")
    func proxyRevalidateIsForSharedCaches() async throws {
        let harness = try await storedThenStale("max-age=10, proxy-revalidate")
        harness.mock.stub(.get, "/page", with: .status(200, fault: .failBeforeResponse(CacheFixtures.originDown)))
        #expect(try await harness.send().value == "stored")
    }

    @Test("an unsafe request sent with .bypass still invalidates what it changed (RFC 9111 §4.4)")
    func bypassedUnsafeInvalidates() async throws {
        let harness = try CacheFixtures.harness()
        harness.mock.stub(
            .get, "/page",
            handler: { _ in .text("item", headerFields: CacheFixtures.fields(["Cache-Control": "max-age=600"])) })
        harness.mock.stub(.delete, "/page", with: .status(204))
        _ = try await harness.send()
        #expect(try await harness.send().cacheStatus?.outcome == .hit)
        _ = try await harness.send(Page(method: .delete, cachePolicy: .bypass, decisionList: []))
        #expect(try await harness.send().cacheStatus?.outcome == .miss)
    }

    @Test("offline fallback off: the network error is thrown")
    func offlineFallbackOff() async throws {
        let harness = try await storedThenStale("max-age=10", servesStaleWhenOffline: false)
        harness.mock.stub(.get, "/page", with: .status(200, fault: .failBeforeResponse(CacheFixtures.originDown)))
        let error = await expectCourierError { try await harness.send() }
        #expect(error?.code == .connectionFailed)
    }

    @Test(
        "row 40: must-revalidate with the origin down gives an error, not stale data",
        arguments: ["must-revalidate", "no-cache"])
    func mustRevalidateOriginDown(directive: String) async throws {
        let harness = try await storedThenStale("max-age=10, \(directive), stale-if-error=600")
        harness.mock.stub(.get, "/page", with: .status(200, fault: .failBeforeResponse(CacheFixtures.originDown)))
        let error = await expectCourierError { try await harness.send() }
        #expect(error?.code == .connectionFailed)
    }

    @Test("RFC 5861 stale-if-error: a 5xx within the window serves the stale entry; past it, the 5xx stands")
    func staleIfError() async throws {
        let harness = try await storedThenStale("max-age=10, stale-if-error=60", servesStaleWhenOffline: false)
        harness.mock.stub(.get, "/page", handler: { _ in .text("down", status: 503) })
        let served = try await harness.send()
        #expect(served.value == "stored" && served.cacheStatus?.outcome == .stale)
        harness.time.advance(by: 60)
        let error = await expectCourierError { try await harness.send() }
        #expect(error?.code == .unacceptableStatus)
    }

    @Test("RFC 5861 stale-while-revalidate: the stale entry is served at once and revalidated in the background")
    func staleWhileRevalidate() async throws {
        let harness = try await storedThenStale("max-age=10, stale-while-revalidate=30")
        harness.mock.stub(
            .get, "/page",
            with: .text(
                "fresh",
                headerFields: CacheFixtures.fields(["Cache-Control": "max-age=10"], date: CacheFixtures.start + 15)))
        let served = try await harness.send()
        #expect(served.value == "stored" && served.cacheStatus?.outcome == .stale)
        await harness.cache.backgroundRevalidations()
        #expect(harness.networkCount == 2)
        let next = try await harness.send()
        #expect(next.value == "fresh" && next.cacheStatus?.outcome == .hit)
    }

    @Test("only-if-cached in a stale-while-revalidate window: the stale entry, and no revalidation in the background")
    func onlyIfCachedDoesNotRevalidate() async throws {
        let harness = try await storedThenStale("max-age=10, stale-while-revalidate=30")
        let served = try await harness.send(Page(headers: ["Cache-Control": "only-if-cached"]))
        #expect(served.value == "stored" && served.cacheStatus?.outcome == .stale)
        await harness.cache.backgroundRevalidations()
        #expect(harness.networkCount == 1)
    }

    @Test("stale-while-revalidate: stale hits while a revalidation runs share it (one request, not one each)")
    func backgroundRevalidationsCoalesce() async throws {
        let harness = try await storedThenStale("max-age=10, stale-while-revalidate=30")
        let gate = AuthFixtures.Gate()
        harness.mock.stub(
            .get, "/page",
            handler: { _ in
                await gate.pass()
                return .text(
                    "fresh",
                    headerFields: CacheFixtures.fields(["Cache-Control": "max-age=10"], date: CacheFixtures.start + 15))
            })
        for _ in 0..<5 {
            let served = try await harness.send()
            #expect(served.value == "stored" && served.cacheStatus?.outcome == .stale)
            await gate.waitForArrivals(1)  // the first hit's revalidation is out, and held
        }
        await gate.open()
        await harness.cache.backgroundRevalidations()
        #expect(harness.networkCount == 2, "the store, then one revalidation for five stale hits")
        #expect(try await harness.send().value == "fresh")
    }

    @Test(
        "stale-while-revalidate does not override the request's own max-age or min-fresh",
        arguments: ["max-age=10", "max-age=0", "min-fresh=3600"])
    func staleWhileRevalidateYieldsToTheRequest(requestDirective: String) async throws {
        let harness = try CacheFixtures.harness()
        let lenient = CacheFixtures.fields(["Cache-Control": "max-age=100, stale-while-revalidate=30"])
        harness.mock.stub(.get, "/page", with: .text("stored", headerFields: lenient))
        _ = try await harness.send()
        harness.time.advance(by: 20)  // fresh for the server; too old for the request
        harness.mock.stub(.get, "/page", with: .text("fresh"))
        let served = try await harness.send(Page(headers: ["Cache-Control": requestDirective]))
        #expect(served.value == "fresh" && served.cacheStatus?.outcome == .miss)
        #expect(harness.networkCount == 2)
    }

    @Test("stale-while-revalidate past its window: revalidated in the foreground")
    func staleWhileRevalidateExpired() async throws {
        let harness = try await storedThenStale("max-age=10, stale-while-revalidate=3")
        harness.mock.stub(.get, "/page", with: .text("fresh"))
        let served = try await harness.send()
        #expect(served.value == "fresh" && served.cacheStatus?.outcome == .miss)
    }

    @Test("policy reloadIgnoringCache: goes to the network without validators, then stores")
    func reloadIgnoringCache() async throws {
        let harness = try CacheFixtures.harness()
        harness.mock.stub(
            .get, "/page",
            handler: { _ in
                .text("v", headerFields: CacheFixtures.fields(["Cache-Control": "max-age=600", "ETag": "\"e\""]))
            })
        _ = try await harness.send()
        let reloaded = try await harness.send(Page(cachePolicy: .reloadIgnoringCache))
        #expect(reloaded.cacheStatus?.outcome == .miss)
        #expect(harness.mock.recordedRequests.last?.head.headerFields[.ifNoneMatch] == nil)
        #expect(harness.networkCount == 2)
        #expect(try await harness.send().cacheStatus?.outcome == .hit)
    }

    @Test("policy returnCacheElseLoad: a stale entry is served without the network; a miss loads")
    func returnCacheElseLoad() async throws {
        let harness = try await storedThenStale("max-age=10")
        let served = try await harness.send(Page(cachePolicy: .returnCacheElseLoad))
        #expect(served.value == "stored" && served.cacheStatus?.outcome == .stale)
        #expect(harness.networkCount == 1)
        harness.mock.stub(.get, "/other", with: .text("loaded"))
        #expect(try await harness.send(Page(path: "/other", cachePolicy: .returnCacheElseLoad)).value == "loaded")
    }

    @Test("policy cacheOnly: serves what is stored; a miss fails with cacheMiss and never touches the network")
    func cacheOnly() async throws {
        let harness = try await storedThenStale("max-age=10")
        #expect(try await harness.send(Page(cachePolicy: .cacheOnly)).value == "stored")
        let error = await expectCourierError { try await harness.send(Page(path: "/missing", cachePolicy: .cacheOnly)) }
        #expect(error?.code == .cacheMiss)
        #expect(error?.stage == .cache)
        #expect(harness.networkCount == 1)
    }

    @Test(
        "policy cacheOnly: a request the cache cannot answer fails with cacheMiss and never reaches the network",
        arguments: [
            ("HEAD", Page(method: .head, cachePolicy: .cacheOnly)),
            ("Range", Page(headers: ["Range": "bytes=0-9"], cachePolicy: .cacheOnly)),
            ("If-None-Match", Page(headers: ["If-None-Match": "\"e\""], cachePolicy: .cacheOnly)),
            ("no-store", Page(headers: ["Cache-Control": "no-store"], cachePolicy: .cacheOnly)),
            ("POST", Page(method: .post, body: .text("x"), cachePolicy: .cacheOnly)),
            ("DELETE", Page(method: .delete, cachePolicy: .cacheOnly)),
            ("Range, only-if-cached", Page(headers: ["Range": "bytes=0-9", "Cache-Control": "only-if-cached"])),
            ("POST, only-if-cached", Page(method: .post, headers: ["Cache-Control": "only-if-cached"])),
        ])
    func cacheOnlyNeverUsesTheNetwork(name: String, page: Page) async throws {
        let harness = try await storedThenStale("max-age=10")
        harness.mock.stub(page.method, "/page", with: .text("from the network"))
        let error = await expectCourierError { try await harness.send(page) }
        #expect(error?.code == .cacheMiss, "\(name)")
        #expect(error?.message?.contains("may not use the network") == true)
        #expect(harness.networkCount == 1, "only the first call, which stored the entry")
    }

    @Test("policy cacheOnly on a client without a cache: cacheMiss, nothing sent")
    func cacheOnlyWithoutACache() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/page", with: .text("from the network"))
        let error = await expectCourierError { try await client.send(Page(cachePolicy: .cacheOnly)) }
        #expect(error?.code == .cacheMiss)
        #expect(error?.message?.contains("the client has no cache") == true)
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test(
        "policy reloadIgnoringCache: a response the cache may not keep also removes the entry it replaces",
        arguments: [
            MockResponse.text("v2", headerFields: CacheFixtures.fields(["Cache-Control": "no-store"])),
            MockResponse.text("v2", headerFields: CacheFixtures.fields(["Cache-Control": "max-age=600", "Vary": "*"])),
            MockResponse.text("gone", status: 403),
        ])
    func reloadReplacesWithUnstorable(reloaded: MockResponse) async throws {
        let harness = try CacheFixtures.harness()
        harness.mock.stub(
            .get, "/page",
            with: [
                .text("v1", headerFields: CacheFixtures.fields(["Cache-Control": "max-age=600"])), reloaded,
                .text("v3"),
            ])
        _ = try await harness.send()
        _ = try? await harness.send(Page(cachePolicy: .reloadIgnoringCache))
        // Not v1 again from the cache: the reload showed that it is no longer what the server has.
        let next = try await harness.send()
        #expect(next.value == "v3")
        #expect(next.cacheStatus?.outcome == .miss)
        #expect(harness.networkCount == 3)
    }

    @Test("a reload that removes its own entry keeps no other page's response, fetched meanwhile, out of the cache")
    func replacingOneEntrySparesOtherKeys() async throws {
        let harness = try CacheFixtures.harness()
        let gate = harness.stubGated("/other", body: "other")
        harness.mock.stub(
            .get, "/page", with: .text("v1", headerFields: CacheFixtures.fields(["Cache-Control": "max-age=600"])))
        _ = try await harness.send()
        harness.mock.stub(
            .get, "/page", with: .text("v2", headerFields: CacheFixtures.fields(["Cache-Control": "no-store"])))

        // /other is on the network when the reload of /page finds that /page may no longer be kept, and removes it.
        let other = Task { try await harness.send(Page(path: "/other")) }
        await gate.waitForArrivals(1)
        #expect(try await harness.send(Page(cachePolicy: .reloadIgnoringCache)).value == "v2")
        #expect(harness.cache.count == 0)
        await gate.open()
        #expect(try await other.value.cacheStatus?.outcome == .miss)

        let again = try await harness.send(Page(path: "/other"))
        #expect(again.cacheStatus?.outcome == .hit, "the removal of /page kept /other's response out")
        #expect(harness.networkCount == 3)
    }

    @Test("a response fetched before a reload removed its own entry is not stored after it")
    func replacedEntryIsNotStoredLate() async throws {
        let harness = try CacheFixtures.harness()
        let gate = AuthFixtures.Gate()
        let calls = DecisionFixtures.Counter()
        harness.mock.stub(
            .get, "/page",
            handler: { _ in
                guard calls.next() == 1 else {
                    return .text("new", headerFields: CacheFixtures.fields(["Cache-Control": "no-store"]))
                }
                await gate.pass()
                return .text("old", headerFields: CacheFixtures.fields(["Cache-Control": "max-age=600"]))
            })
        let first = Task { try await harness.send() }
        await gate.waitForArrivals(1)
        #expect(try await harness.send(Page(cachePolicy: .reloadIgnoringCache)).value == "new")
        await gate.open()
        #expect(try await first.value.value == "old")
        #expect(harness.cache.count == 0, "a response fetched before the reload came back after it")
    }

    /// A store of one's own whose lookups, once `gating` is set, wait at `gate` after reading (a store a round trip
    /// away, such as PostgreSQL).
    final class SlowStore: CacheStore {
        let inner = CacheFixtures.OwnStore()
        let gate = AuthFixtures.Gate()
        let gating = DecisionFixtures.Shared(false)
        var partitionKey: [UInt8] { inner.partitionKey }

        func entry(for key: CacheKey) async throws -> CacheEntry? {
            let entry = try await inner.entry(for: key)
            if gating.value { await gate.pass() }
            return entry
        }

        func store(_ entry: CacheEntry) async throws { try await inner.store(entry) }
        func removeEntries(_ selection: CacheSelection) async throws { try await inner.removeEntries(selection) }
    }

    @Test("an entry looked up before a removal (a sign-out) is not stored again by the 304 of its revalidation")
    func removalDuringTheLookup() async throws {
        let store = SlowStore()
        let time = CacheFixtures.Time()
        let cache = HTTPCache(store: store, now: time.closure)
        let (client, mock) = Fixtures.client { $0.cache = cache }
        let validated = CacheFixtures.fields(["Cache-Control": "max-age=10", "ETag": "\"v1\""])
        mock.stub(
            .get, "/page", with: [.text("stored", headerFields: validated), .status(304, headerFields: validated)])
        _ = try await client.sendWithCacheStatus(Page())
        time.advance(by: 20)

        store.gating.update { $0 = true }
        let call = Task { try await client.sendWithCacheStatus(Page()) }
        await store.gate.waitForArrivals(1)  // the stale entry is read; the revalidation is not sent yet
        try await cache.removeEntries(.all)
        await store.gate.open()
        let revalidated = try await call.value
        #expect(revalidated.value == "stored" && revalidated.cacheStatus?.outcome == .revalidated)
        #expect(store.inner.entries.isEmpty, "the entry read before the removal came back with the 304")
    }

    @Test("a 304 without a Date is dated when it arrived: the revalidated entry is fresh for its max-age again")
    func notModifiedWithoutDate() async throws {
        let harness = try CacheFixtures.harness()
        let validated = CacheFixtures.fields(["Cache-Control": "max-age=10", "ETag": "\"v1\""])
        let undated = CacheFixtures.fields(["Cache-Control": "max-age=10", "ETag": "\"v1\""], date: nil)
        harness.mock.stub(
            .get, "/page", with: [.text("stored", headerFields: validated), .status(304, headerFields: undated)])
        _ = try await harness.send()
        harness.time.advance(by: 20)
        #expect(try await harness.send().cacheStatus?.outcome == .revalidated)
        harness.time.advance(by: 5)
        let again = try await harness.send()
        #expect(again.value == "stored" && again.cacheStatus?.outcome == .hit)
        #expect(harness.networkCount == 2)
    }

    @Test("a 304 without Age drops the stored Age: the revalidated entry is fresh for its whole max-age again")
    func notModifiedWithoutAge() async throws {
        let harness = try CacheFixtures.harness()
        let aged = CacheFixtures.fields(["Cache-Control": "max-age=100", "ETag": "\"v1\"", "Age": "90"])
        harness.mock.stub(.get, "/page", with: .text("stored", headerFields: aged))
        _ = try await harness.send()
        harness.time.advance(by: 20)
        let dated = CacheFixtures.fields(["ETag": "\"v1\""], date: CacheFixtures.start.addingTimeInterval(20))
        harness.mock.stub(.get, "/page", with: .status(304, headerFields: dated))
        #expect(try await harness.send().cacheStatus?.outcome == .revalidated)
        harness.time.advance(by: 30)
        let again = try await harness.send()
        #expect(again.cacheStatus?.outcome == .hit, "30 s into a 100 s max-age")
        #expect(harness.networkCount == 2)
    }

    @Test("only-if-cached on the request: a miss fails with cacheMiss")
    func onlyIfCached() async throws {
        let harness = try CacheFixtures.harness()
        let error = await expectCourierError {
            try await harness.send(Page(headers: ["Cache-Control": "only-if-cached"]))
        }
        #expect(error?.code == .cacheMiss)
        #expect(harness.networkCount == 0)
    }

    @Test("policy bypass and a client without a cache: no cache status, nothing stored")
    func bypass() async throws {
        let harness = try CacheFixtures.harness()
        harness.mock.stub(
            .get, "/page",
            handler: { _ in .text("v", headerFields: CacheFixtures.fields(["Cache-Control": "max-age=600"])) })
        let result = try await harness.send(Page(cachePolicy: .bypass))
        #expect(result.cacheStatus == nil)
        #expect(harness.cache.count == 0)
        let (plain, mock) = Fixtures.client()
        mock.stub(.get, "/page", with: .text("v"))
        #expect(try await plain.sendWithCacheStatus(Page()).cacheStatus == nil)
    }

    @Test("max-stale and max-age on the request")
    func requestDirectives() async throws {
        let harness = try await storedThenStale("max-age=10", by: 5)
        let tolerant = try await harness.send(Page(headers: ["Cache-Control": "max-stale=10"]))
        #expect(tolerant.cacheStatus?.outcome == .stale && harness.networkCount == 1)
        let newer = CacheFixtures.fields(["Cache-Control": "max-age=100"], date: CacheFixtures.start + 15)
        harness.mock.stub(.get, "/page", handler: { _ in .text("new", headerFields: newer) })
        _ = try await harness.send()
        harness.time.advance(by: 20)
        let strict = try await harness.send(Page(headers: ["Cache-Control": "max-age=10"]))
        #expect(strict.cacheStatus?.outcome == .miss)
    }

    @Test(
        "request max-stale does not lift the request's own max-age or min-fresh (RFC 9111 §5.2.1)",
        arguments: ["max-age=10, max-stale=5", "min-fresh=3600, max-stale=5", "max-stale, max-age=10"])
    func maxStaleKeepsTheRequestsOtherLimits(directives: String) async throws {
        // Stored with max-age=100, asked for 20 s later: fresh by its lifetime, too old for the request.
        let harness = try CacheFixtures.harness()
        harness.mock.stub(
            .get, "/page",
            with: [
                .text("stored", headerFields: CacheFixtures.fields(["Cache-Control": "max-age=100"])),
                .text("new", headerFields: CacheFixtures.fields(["Cache-Control": "max-age=100"])),
            ])
        _ = try await harness.send()
        harness.time.advance(by: 20)
        let answered = try await harness.send(Page(headers: ["Cache-Control": directives]))
        #expect(answered.value == "new")
        #expect(answered.cacheStatus?.outcome == .miss)
        #expect(harness.networkCount == 2)
    }
}

/// A flag set once, read from a mock's handler.
private final class LockedFlag: Sendable {
    private let state = LockedBox(false)
    var isSet: Bool { state.withLock { $0 } }
    func set() { state.withLock { $0 = true } }
}
