import Courier
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
