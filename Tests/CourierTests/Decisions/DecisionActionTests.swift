import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// What each ``DecisionAction`` does to a call, observed through the client's pipeline.
@Suite("DecisionAction", .timeLimit(.minutes(1)))
struct DecisionActionTests {
    /// A decision that restarts the call on 401 and leaves its list as it is.
    private static let refreshOn401 = DecisionFixtures.restart(on: 401, name: "refresh")

    @Test(".done(with:) skips the remaining decisions and parses its response")
    func doneSkipsRemainingDecisions() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .text("server error", status: 500))
        let later = DecisionFixtures.Counter()
        let probe = DecisionFixtures.textProbe(
            decisions: [
                .custom("shortCircuit") { response, _ in
                    var response = response
                    response.body = Data("from cache".utf8)
                    return .done(with: response)
                },
                .custom("later") { response, _ in
                    later.next()
                    return .continue(with: response)
                },
                .validateStatus(),
            ]
        )
        #expect(try await client.send(probe) == "from cache")
        #expect(later.count == 0)
        #expect(mock.recordedRequests.count == 1)
    }

    @Test(".restart(with:) re-runs the adapters, so a token provider is asked again")
    func restartRerunsAdapters() async throws {
        let tokens = DecisionFixtures.Counter()
        let (client, mock) = Fixtures.client {
            $0.adapters = [.bearer { "token-\(tokens.next())" }, UserAgentAdapter.courier]
        }
        mock.stub(.get, "/probe", with: [.status(401), .text("welcome")])
        let probe = DecisionFixtures.textProbe(decisions: [Self.refreshOn401, .validateStatus()])
        #expect(try await client.send(probe) == "welcome")
        #expect(tokens.count == 2)
        let sent = mock.recordedRequests
        #expect(sent.map(\.attempt) == [1, 2])
        #expect(sent.map { $0.head.headerFields[.authorization] } == ["Bearer token-1", "Bearer token-2"])
    }

    @Test("each restart increases the attempt number the transport and the decisions see")
    func attemptsIncrease() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: [.status(401), .status(401), .status(401), .text("ok")])
        let seen = DecisionFixtures.Journal()
        let probe = DecisionFixtures.textProbe(
            decisions: [
                .custom("observe") { response, context in
                    seen.record("attempt \(context.attempt) restarts \(context.restarts)")
                    return .continue(with: response)
                },
                Self.refreshOn401,
                .validateStatus(),
            ]
        )
        #expect(try await client.send(probe) == "ok")
        #expect(mock.recordedRequests.map(\.attempt) == [1, 2, 3, 4])
        #expect(
            seen.entries == [
                "attempt 1 restarts 0", "attempt 2 restarts 1", "attempt 3 restarts 2", "attempt 4 restarts 3",
            ]
        )
    }

    @Test("a restart loop ends with tooManyRestarts after maxRestarts", arguments: [0, 1, 3])
    func restartLoopIsBounded(maxRestarts: Int) async throws {
        let (client, mock) = Fixtures.client { $0.maxRestarts = maxRestarts }
        mock.stub(.get, "/probe") { _ in .status(401) }
        let probe = DecisionFixtures.textProbe(decisions: [Self.refreshOn401, .validateStatus()])
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect(error.code == .tooManyRestarts)
        #expect(error.stage == .decide)
        #expect(mock.recordedRequests.count == maxRestarts + 1)
        #expect(error.trace.decisionNames == Array(repeating: "refresh", count: maxRestarts + 1))
        #expect(error.message?.contains("at most \(maxRestarts)") == true)
    }

    @Test("the default restart limit is 20")
    func defaultRestartLimit() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe") { _ in .status(401) }
        let probe = DecisionFixtures.textProbe(decisions: [Self.refreshOn401])
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect(error.code == .tooManyRestarts)
        #expect(Client.Configuration().maxRestarts == 20)
        #expect(mock.recordedRequests.count == 21)
    }

    @Test("the restart's list replaces the whole chain for the next attempt")
    func restartListReplacesChain() async throws {
        let (client, mock) = Fixtures.client { $0.decisions = [.custom("client") { r, _ in .continue(with: r) }] }
        mock.stub(.get, "/probe", with: [.status(500), .status(500)])
        let probe = DecisionFixtures.textProbe(
            decisions: [
                .custom("switch", when: { $0.status.code == 500 }) { _, _ in
                    .restart(with: [.custom("second") { r, _ in .done(with: r) }])
                }
            ]
        )
        let capture = DecisionFixtures.LogCapture()
        let logged = client.configured { $0.logger = capture.logger() }
        #expect(try await logged.send(probe) == "")
        #expect(mock.recordedRequests.count == 2)
        #expect(capture.messages.onlyElement?.hasSuffix("[client ✓ → switch ↻ restart → second ✓ → parse ✓]") == true)
    }

    @Test("an empty decision list goes straight to parsing, whatever the status", arguments: [200, 404, 500])
    func emptyDecisionsGoToParsing(code: Int) async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .text("body \(code)", status: code))
        #expect(try await client.send(DecisionFixtures.textProbe(decisions: [])) == "body \(code)")
    }

    @Test("an empty restart list goes straight to parsing on the next attempt")
    func emptyRestartList() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: [.status(401), .text("second", status: 503)])
        let probe = DecisionFixtures.textProbe(decisions: [.custom("clear") { _, _ in .restart(with: []) }])
        #expect(try await client.send(probe) == "second")
        #expect(mock.recordedRequests.count == 2)
    }

    @Test("client decisions run before the request's")
    func clientDecisionsFirst() async throws {
        let order = DecisionFixtures.Journal()
        let (client, mock) = Fixtures.client {
            $0.decisions = [
                .custom("client") { response, _ in
                    order.record("client")
                    return .continue(with: response)
                }
            ]
        }
        mock.stub(.get, "/probe", with: .text("nope", status: 404))
        let probe = DecisionFixtures.textProbe(
            decisions: [
                .custom("request") { response, _ in
                    order.record("request")
                    return .continue(with: response)
                },
                .validateStatus(),
            ]
        )
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect(order.entries == ["client", "request"])
        #expect(error.trace.decisionNames == ["client", "request", "validateStatus"])
        #expect(error.trace.description == "client ✓ → request ✓ → validateStatus ✗")
    }

    @Test(".fail with an error of the app's own fails at decide with code decisionFailed")
    func failWithOwnError() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .text("x"))
        let probe = DecisionFixtures.textProbe(
            decisions: [
                .custom("deny") { _, _ in .fail(DecisionFixtures.Failure(reason: "denied")) }, .validateStatus(),
            ]
        )
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect(error.code == .decisionFailed)
        #expect(error.stage == .decide)
        #expect(error.underlyingError as? DecisionFixtures.Failure == DecisionFixtures.Failure(reason: "denied"))
        #expect(error.trace.decisionNames == ["deny"])
    }

    @Test("a restart of a request with a one-shot body fails with bodyNotReplayable, sending nothing more")
    func restartWithOneShotBody() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.post, "/probe") { _ in .status(401) }
        var probe = DecisionFixtures.textProbe(method: .post, decisions: [Self.refreshOn401])
        probe.body = .stream(DecisionFixtures.oneShotBody("upload"))
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect(error.code == .bodyNotReplayable)
        #expect(mock.recordedRequests.count == 1)
        #expect(mock.recordedRequests.first?.bodyText == "upload")
    }

    @Test("the trace of a failed call records every step with its attempt")
    func traceAcrossAttempts() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: [.status(503), .text("bad", status: 400)])
        let probe = DecisionFixtures.textProbe(decisions: [.retry(2), .validateStatus()])
        let error = try #require(await expectCourierError { try await client.send(probe) })
        let decisions = error.trace.steps.filter { $0.kind == .decision }
        #expect(decisions.map(\.name) == ["retry", "validateStatus"])
        #expect(decisions.map(\.attempt) == [1, 2])
        #expect(decisions.map(\.outcome) == [.restarted, .failed])
        #expect(error.trace.description == "retry ↻ restart → validateStatus ✗")
        #expect(error.trace.adapterNames(attempt: 1) == ["method", "userAgent"])
        #expect(error.trace.adapterNames(attempt: 2) == ["method", "userAgent"])
    }
}
