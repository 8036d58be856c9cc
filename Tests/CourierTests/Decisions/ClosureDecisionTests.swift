import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

private struct TeapotError: Error, Equatable {}

@Suite("ClosureDecision", .timeLimit(.minutes(1)))
struct ClosureDecisionTests {
    @Test(".custom fails a 418 with the error it returns, kept as underlyingError")
    func customFails() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .text("I'm a teapot", status: 418))
        let probe = DecisionFixtures.textProbe(
            decisions: [.custom("teapot", when: { $0.status.code == 418 }) { _, _ in .fail(TeapotError()) }]
        )
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect(error.underlyingError as? TeapotError == TeapotError())
        #expect(error.code == .decisionFailed)
        #expect(error.stage == .decide)
        #expect(error.response?.status.code == 418)
        #expect(error.trace.description == "teapot ✗")
    }

    @Test("a false condition skips the closure entirely and leaves no trace step")
    func conditionSkipsBody() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .text("fine"))
        let calls = DecisionFixtures.Counter()
        let probe = DecisionFixtures.textProbe(
            decisions: [
                .custom("teapot", when: { $0.status.code == 418 }) { response, _ in
                    calls.next()
                    return .fail(TeapotError())
                },
                .custom("stop") { _, _ in .fail(DecisionFixtures.Failure(reason: "stop")) },
            ]
        )
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect(calls.count == 0)
        #expect(error.trace.decisionNames == ["stop"])
    }

    @Test("the closure receives the response and a context describing the call")
    func closureSeesResponseAndContext() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.delete, "/probe", with: .text("gone", status: 202))
        let seen = DecisionFixtures.Journal()
        var probe = DecisionFixtures.textProbe(
            method: .delete,
            decisions: [
                .validateStatus(),
                .custom("inspect") { response, context in
                    seen.record(
                        "\(response.status.code) \(String(decoding: response.body, as: UTF8.self)) "
                            + "\(context.request.method) \(context.request.path ?? "") attempt \(context.attempt) "
                            + "restarts \(context.restarts) index \(context.index) of \(context.decisions.count) "
                            + "resendable \(context.canResendBody)"
                    )
                    return .continue(with: response)
                },
            ]
        )
        probe.body = .text("x")
        #expect(try await client.send(probe) == "gone")
        let clientDecisions = Client.Configuration().decisions.count
        #expect(
            seen.entries == [
                "202 gone DELETE /probe attempt 1 restarts 0 index \(clientDecisions + 1) of \(clientDecisions + 2) "
                    + "resendable true"
            ]
        )
    }

    @Test("a continue with a changed response hands the change to the next step")
    func continueWithChangedResponse() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .text("original"))
        let probe = DecisionFixtures.textProbe(
            decisions: [
                .custom("rewrite") { response, _ in
                    var response = response
                    response.body = Data("rewritten".utf8)
                    return .continue(with: response)
                },
                .validateStatus(),
            ]
        )
        #expect(try await client.send(probe) == "rewritten")
    }

    @Test("an error thrown from the closure fails the call like .fail")
    func thrownErrorFails() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .text("x"))
        let probe = DecisionFixtures.textProbe(
            decisions: [.custom("throws") { _, _ in throw DecisionFixtures.Failure(reason: "thrown") }]
        )
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect(error.underlyingError as? DecisionFixtures.Failure == DecisionFixtures.Failure(reason: "thrown"))
        #expect(error.stage == .decide)
        #expect(error.trace.description == "throws ✗")
    }

    @Test("a CourierError from a closure is passed through, not wrapped again")
    func courierErrorPassesThrough() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .text("x"))
        let probe = DecisionFixtures.textProbe(
            decisions: [
                .custom("refuse") { _, _ in
                    .fail(CourierError(code: .missingCredential, stage: .decide, message: "sign in first"))
                }
            ]
        )
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect(error.code == .missingCredential)
        #expect(error.message == "sign in first")
        #expect(error.underlyingError == nil)
        #expect(error.request?.path == "/probe")
    }

    @Test("the initializer and .custom build the same decision; the condition defaults to always")
    func initializerAndDefaults() async throws {
        let decision = ClosureDecision(name: "always") { response, _ in .done(with: response) }
        #expect(decision.name == "always")
        for code in [200, 404, 503] {
            #expect(decision.shouldApply(to: DecisionFixtures.received(code), context: DecisionFixtures.context()))
        }
        let action = try await decision.decide(DecisionFixtures.received(404), context: DecisionFixtures.context())
        #expect(action.caseName == "done")
        #expect(ClosureDecision.custom("named") { response, _ in .continue(with: response) }.name == "named")
    }
}
