import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// The trace and status wording, and the log line (design §1: `cache hit`, `cache revalidated`).
@Suite("CacheStatus and trace")
struct CacheStatusTests {
    @Test("the trace shows the cache step without a tick, and decisionNames leave it out")
    func traceDescription() {
        var trace = DecisionTrace()
        trace.record(.cache, "\(CacheStatus(outcome: .revalidated))", .succeeded, attempt: 1)
        trace.record(.decision, "validateStatus", .succeeded, attempt: 1)
        trace.record(.parse, "parse", .succeeded, attempt: 1)
        #expect(trace.description == "cache revalidated → validateStatus ✓ → parse ✓")
        #expect(trace.decisionNames == ["validateStatus", "parse"])
    }

    @Test("status flags", arguments: [CacheStatus.Outcome.miss, .hit, .revalidated, .stale])
    func flags(outcome: CacheStatus.Outcome) {
        let status = CacheStatus(outcome: outcome, age: .seconds(3))
        #expect(status.isFromCache == (outcome != .miss))
        #expect(status.isStale == (outcome == .stale))
        #expect(status.description == "cache \(outcome.rawValue)")
    }
}

/// The cache's outcomes reach event monitors (and through them metrics and traces).
@Suite("HTTPCache: monitor events", .timeLimit(.minutes(1)))
struct CacheEventTests {
    @Test(
        "a miss that is stored reports cached(miss) and cached(stored); a hit reports cached(hit); stale reports cached(stale)"
    )
    func cacheEvents() async throws {
        let monitor = MonitorFixtures.RecordingMonitor()
        let harness = try CacheFixtures.harness { $0.monitors = [monitor] }
        harness.mock.stub(
            .get, "/page", with: .text("v", headerFields: CacheFixtures.fields(["Cache-Control": "max-age=10"])))
        _ = try await harness.send()
        _ = try await harness.send()
        harness.time.advance(by: 20)
        _ = try await harness.send(CacheFixtures.Page(cachePolicy: .returnCacheElseLoad))
        let outcomes = await monitor.events(untilCallsEnded: 3).compactMap { event -> String? in
            guard case .cached(let outcome) = event.kind else { return nil }
            return outcome.rawValue
        }
        #expect(outcomes == ["miss", "stored", "hit", "stale"])
    }

    @Test("a response the store refuses (larger than the whole memory cache) is not reported as stored")
    func refusedIsNotReportedStored() async throws {
        let monitor = MonitorFixtures.RecordingMonitor()
        let harness = try CacheFixtures.harness(storage: .memory(byteLimit: 64)) { $0.monitors = [monitor] }
        let response = MockResponse.text(
            String(repeating: "x", count: 4096), headerFields: CacheFixtures.fields(["Cache-Control": "max-age=10"]))
        harness.mock.stub(.get, "/page", with: [response, response])
        _ = try await harness.send()
        let outcomes = await monitor.events(untilCallsEnded: 1).compactMap { event -> String? in
            guard case .cached(let outcome) = event.kind else { return nil }
            return outcome.rawValue
        }
        #expect(outcomes == ["miss"])
        #expect(harness.cache.count == 0)
        #expect(try await harness.send().cacheStatus?.outcome == .miss)
        #expect(harness.networkCount == 2)
    }
}
