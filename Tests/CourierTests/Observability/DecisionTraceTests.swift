import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("DecisionTrace", .timeLimit(.minutes(1)))
struct DecisionTraceTests {
    /// The trace of a refreshed call: adapters, a restart, then success.
    private static var refreshed: DecisionTrace {
        var trace = DecisionTrace()
        trace.record(.adapter, "method", .succeeded, attempt: 1)
        trace.record(.adapter, "bearer", .succeeded, attempt: 1)
        trace.record(.decision, "refreshToken", .restarted, attempt: 1)
        trace.record(.adapter, "method", .succeeded, attempt: 2)
        trace.record(.adapter, "bearer", .succeeded, attempt: 2)
        trace.record(.adapter, "userAgent", .succeeded, attempt: 2)
        trace.record(.decision, "validateStatus", .succeeded, attempt: 2)
        trace.record(.parse, "parse", .succeeded, attempt: 2)
        return trace
    }

    @Test("the description shows decisions and parse only, as in the design's log line")
    func description() {
        #expect(Self.refreshed.description == "refreshToken ↻ restart → validateStatus ✓ → parse ✓")
    }

    @Test("decisionNames lists decisions and parse in order; adapterNames lists one attempt's adapters")
    func names() {
        let trace = Self.refreshed
        #expect(trace.decisionNames == ["refreshToken", "validateStatus", "parse"])
        #expect(trace.adapterNames(attempt: 1) == ["method", "bearer"])
        #expect(trace.adapterNames(attempt: 2) == ["method", "bearer", "userAgent"])
        #expect(trace.adapterNames(attempt: 3).isEmpty)
    }

    @Test("each outcome has its mark; a finished decision reads like a success")
    func outcomes() {
        var trace = DecisionTrace()
        trace.record(.decision, "cache", .finished, attempt: 1)
        trace.record(.decision, "retry", .restarted, attempt: 1)
        trace.record(.decision, "validateStatus", .failed, attempt: 2)
        #expect(trace.description == "cache ✓ → retry ↻ restart → validateStatus ✗")
        #expect(trace.steps.map(\.outcome) == [.finished, .restarted, .failed])
        #expect(trace.steps.map(\.attempt) == [1, 1, 2])
    }

    @Test("an empty trace is empty and describes as nothing; a trace of adapters only describes as nothing too")
    func empty() {
        #expect(DecisionTrace().isEmpty)
        #expect(DecisionTrace().description == "")
        var adaptersOnly = DecisionTrace()
        adaptersOnly.record(.adapter, "method", .succeeded, attempt: 1)
        #expect(!adaptersOnly.isEmpty)
        #expect(adaptersOnly.description == "")
        #expect(adaptersOnly.decisionNames.isEmpty)
    }

    @Test("traces compare by their steps")
    func equality() {
        #expect(Self.refreshed == Self.refreshed)
        var other = Self.refreshed
        other.record(.parse, "parse", .succeeded, attempt: 2)
        #expect(other != Self.refreshed)
        #expect(
            DecisionTrace.Step(kind: .decision, name: "x", outcome: .failed, attempt: 1)
                == DecisionTrace.Step(kind: .decision, name: "x", outcome: .failed, attempt: 1)
        )
    }

    @Test("the pipeline records adapters per attempt and decisions in the order they ran")
    func recordedByPipeline() async throws {
        let tokens = DecisionFixtures.Counter()
        let (client, mock) = Fixtures.client {
            $0.adapters = [.bearer { "t\(tokens.next())" }, UserAgentAdapter.courier]
        }
        mock.stub(.get, "/probe", with: [.status(401), .status(418)])
        let refresh = DecisionFixtures.restart(on: 401, name: "refreshToken")
        var probe = DecisionFixtures.textProbe(decisions: [refresh, .validateStatus()])
        probe.headers = ["Accept": "text/plain"]
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect(error.trace.description == "refreshToken ↻ restart → validateStatus ✗")
        #expect(error.trace.decisionNames == ["refreshToken", "validateStatus"])
        #expect(error.trace.adapterNames(attempt: 1) == ["method", "headers", "bearer", "userAgent"])
        #expect(error.trace.adapterNames(attempt: 2) == ["method", "headers", "bearer", "userAgent"])
        #expect(error.description.hasSuffix("[refreshToken ↻ restart → validateStatus ✗]"))
    }

    @Test("a failing adapter is the last step of the trace")
    func failingAdapter() async throws {
        let (client, _) = Fixtures.client()
        var probe = Probe()
        probe.extraAdapters = [.custom("explode") { _, _ in throw DecisionFixtures.Failure(reason: "adapter") }]
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect(error.stage == .adapt)
        #expect(error.code == .adapterFailed)
        let last = try #require(error.trace.steps.last)
        #expect(last == DecisionTrace.Step(kind: .adapter, name: "explode", outcome: .failed, attempt: 1))
        #expect(error.trace.description == "")
    }
}
