import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("RetryDecision", .timeLimit(.minutes(1)))
struct RetryDecisionTests {
    private static func retryingProbe(
        method: HTTPRequest.Method = .get,
        retry: RetryDecision = .retry(2)
    ) -> Probe<String> {
        DecisionFixtures.textProbe(method: method, decisions: [retry, .validateStatus()])
    }

    @Test(".retry(2) against 503, 503, 503 sends exactly 3 requests, then fails with unacceptableStatus")
    func countsRetries() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe") { _ in .text("busy", status: 503) }
        let error = try #require(await expectCourierError { try await client.send(Self.retryingProbe()) })
        #expect(mock.recordedRequests.count == 3)
        #expect(mock.recordedRequests.map(\.attempt) == [1, 2, 3])
        #expect(error.code == .unacceptableStatus)
        #expect(error.response?.status.code == 503)
        #expect(error.trace.description == "retry ↻ restart → retry ↻ restart → validateStatus ✗")
    }

    @Test(".retry(2) against 503, 503, 200 succeeds after 3 sends")
    func succeedsAfterRetries() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: [.status(503), .status(503), .text("finally")])
        #expect(try await client.send(Self.retryingProbe()) == "finally")
        #expect(mock.recordedRequests.count == 3)
    }

    @Test("every default retryable status is retried", arguments: [408, 429, 500, 502, 503, 504])
    func retryableStatuses(code: Int) async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: [.status(code), .text("ok")])
        #expect(try await client.send(Self.retryingProbe()) == "ok")
        #expect(mock.recordedRequests.count == 2)
    }

    @Test("statuses outside the retryable set are not retried", arguments: [400, 401, 403, 404, 409, 422, 501])
    func nonRetryableStatuses(code: Int) async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe") { _ in .status(code) }
        let error = try #require(await expectCourierError { try await client.send(Self.retryingProbe()) })
        #expect(mock.recordedRequests.count == 1)
        #expect(error.code == .unacceptableStatus)
        #expect(error.response?.status.code == code)
        #expect(error.trace.decisionNames == ["validateStatus"])
    }

    @Test("a POST answered 503 is not retried")
    func postIsNotRetried() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.post, "/probe") { _ in .status(503) }
        let error = try #require(
            await expectCourierError { try await client.send(Self.retryingProbe(method: .post)) }
        )
        #expect(mock.recordedRequests.count == 1)
        #expect(error.code == .unacceptableStatus)
    }

    @Test(
        "only idempotent methods are retryable by default",
        arguments: [
            (HTTPRequest.Method.get, true), (.head, true), (.options, true), (.put, true), (.delete, true),
            (.trace, true), (.post, false), (.patch, false), (.connect, false),
        ]
    )
    func idempotentMethods(method: HTTPRequest.Method, retryable: Bool) {
        let context = DecisionFixtures.context(method: method)
        #expect(RetryDecision.isRetryable(DecisionFixtures.received(503), context: context) == retryable)
        #expect(RetryDecision.isRetryable(DecisionFixtures.received(200), context: context) == false)
    }

    @Test("the delays are slept on the configured clock, per retry")
    func delaysUseInjectedClock() async throws {
        let clock = DecisionFixtures.RecordingClock()
        let (client, mock) = Fixtures.client { $0.clock = clock }
        mock.stub(.get, "/probe") { _ in .status(503) }
        let retry = RetryDecision.retry(3, delay: { .milliseconds(500 << ($0 - 1)) })
        _ = await expectCourierError { try await client.send(Self.retryingProbe(retry: retry)) }
        #expect(clock.sleeps == [.milliseconds(500), .milliseconds(1000), .milliseconds(2000)])
        #expect(mock.recordedRequests.count == 4)
    }

    @Test("the default delay does not sleep at all")
    func defaultDelayDoesNotSleep() async throws {
        let clock = DecisionFixtures.RecordingClock()
        let (client, mock) = Fixtures.client { $0.clock = clock }
        mock.stub(.get, "/probe", with: [.status(503), .text("ok")])
        #expect(try await client.send(Self.retryingProbe()) == "ok")
        #expect(clock.sleeps.isEmpty)
    }

    @Test("cancellation during the retry delay ends the call with CancellationError and sends nothing more")
    func cancellationDuringDelay() async throws {
        let clock = DecisionFixtures.SuspendingClock()
        let (client, mock) = Fixtures.client { $0.clock = clock }
        mock.stub(.get, "/probe") { _ in .status(503) }
        let probe = Self.retryingProbe(retry: .retry(2, delay: { _ in .seconds(30) }))
        let task = Task { try await client.send(probe) }
        var started: Duration?
        for await duration in clock.sleepStarted {
            started = duration
            break
        }
        #expect(started == .seconds(30))
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(mock.recordedRequests.count == 1)
    }

    @Test("a request with a one-shot stream body is never retried")
    func oneShotBodyIsNotRetried() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.put, "/probe", with: [.status(503), .status(503), .text("ok")])
        var probe = Self.retryingProbe(method: .put)
        probe.body = .stream(DecisionFixtures.oneShotBody("payload"))
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect(mock.recordedRequests.count == 1)
        #expect(mock.recordedRequests.first?.bodyText == "payload")
        #expect(error.code == .unacceptableStatus)
        #expect(error.trace.decisionNames == ["validateStatus"])
    }

    @Test("a replayable body is re-sent whole on every retry")
    func replayableBodyIsResent() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.put, "/probe", with: [.status(503), .text("ok")])
        var probe = Self.retryingProbe(method: .put)
        probe.body = .text("payload")
        #expect(try await client.send(probe) == "ok")
        #expect(mock.recordedRequests.map(\.bodyText) == ["payload", "payload"])
    }

    @Test("the count holds when other restarts interleave with retries")
    func countSurvivesOtherRestarts() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: [.status(503), .status(401), .status(503), .text("never reached")])
        let reauthenticate = DecisionFixtures.restart(on: 401, name: "reauthenticate")
        let probe = DecisionFixtures.textProbe(decisions: [.retry(1), reauthenticate, .validateStatus()])
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect(mock.recordedRequests.count == 3)
        #expect(error.response?.status.code == 503)
        #expect(error.trace.description == "retry ↻ restart → reauthenticate ↻ restart → validateStatus ✗")
    }

    @Test("retries configured on the client apply to every request")
    func clientRetries() async throws {
        let (client, mock) = Fixtures.client { $0.decisions = [.retry(1)] }
        mock.stub(.get, "/probe", with: [.status(500), .text("ok")])
        #expect(try await client.send(Probe()) == "ok")
        #expect(mock.recordedRequests.count == 2)
    }

    @Test(
        "a request's stated retry policy replaces a retry in the client's decisions: .disabled means one attempt",
        arguments: [0, 3])
    func requestPolicyReplacesClientRetry(maxRetries: Int) async throws {
        struct Stated: Request {
            typealias Response = String
            var path: String { "/probe" }
            let retryPolicy: RetryPolicy?
        }
        let (client, mock) = Fixtures.client { $0.decisions = [.retry(1)] }
        mock.stub(.get, "/probe", with: [.status(503), .status(503), .status(503), .text("ok")])
        let stated = Stated(retryPolicy: RetryPolicy(maxRetries: maxRetries, backoff: .none))
        if maxRetries == 0 {
            let error = await expectCourierError { try await client.send(stated) }
            #expect(error?.response?.status.code == 503)
            #expect(mock.recordedRequests.count == 1)
        } else {
            #expect(try await client.send(stated) == "ok")
            #expect(mock.recordedRequests.count == 4)
        }
    }

    /// Fails over to a backup host when the primary refuses the connection.
    struct Failover: TransportFailureDecision {
        var name: String { "failover" }
        func decide(_ response: ReceivedResponse, context: DecisionContext) async throws -> DecisionAction {
            .continue(with: response)
        }
        func recover(from error: any Error, context: DecisionContext) async throws -> DecisionAction? {
            guard (error as? CourierError)?.code == .connectionRefused, context.request.authority == "api.example.com",
                let backup = URL(string: "https://backup.example.com/probe")
            else { return nil }
            let target = Redirection(
                url: backup, method: context.request.method, dropsBody: false, stripsCredentials: true)
            return .restart(with: context.decisions(replacingCurrentWith: self), redirection: target)
        }
    }

    /// Turns every transport failure into the app's own error.
    struct Offline: TransportFailureDecision {
        var name: String { "offline" }
        func decide(_ response: ReceivedResponse, context: DecisionContext) async throws -> DecisionAction {
            .continue(with: response)
        }
        func recover(from error: any Error, context: DecisionContext) async throws -> DecisionAction? {
            .fail(DecisionFixtures.Failure(reason: "offline"))
        }
    }

    @Test("a transport-failure decision's restart goes to its redirection (a fail-over), and its .fail error stands")
    func transportFailureActions() async throws {
        let (client, mock) = Fixtures.client { $0.decisions = [Failover()] }
        mock.stub(.get, "/probe") { request in
            if request.head.authority == "api.example.com" {
                throw CourierError(code: .connectionRefused, stage: .transport, message: "refused")
            }
            return .text("backup ok")
        }
        #expect(try await client.send(Probe()) == "backup ok")
        #expect(mock.recordedRequests.map(\.head.authority) == ["api.example.com", "backup.example.com"])

        let (offlineClient, offlineMock) = Fixtures.client { $0.decisions = [Offline()] }
        offlineMock.stub(.get, "/probe") { _ in
            throw CourierError(code: .connectionRefused, stage: .transport, message: "refused")
        }
        let error = try #require(await expectCourierError { try await offlineClient.send(Probe()) })
        #expect(error.code == .decisionFailed)
        #expect(error.stage == .decide)
        #expect(error.underlyingError as? DecisionFixtures.Failure == DecisionFixtures.Failure(reason: "offline"))
        #expect(error.trace.description == "offline ✗")
    }

    @Test("a custom condition decides what is retried")
    func customCondition() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.post, "/probe", with: [.status(409), .text("ok")])
        let retry = RetryDecision.retry(1, when: { response, _ in response.status.code == 409 })
        #expect(try await client.send(Self.retryingProbe(method: .post, retry: retry)) == "ok")
        #expect(mock.recordedRequests.count == 2)
    }

    @Test(
        "a policy's condition replaces the status check, not the method check: a POST is retried only with a key",
        arguments: [false, true])
    func policyConditionKeepsTheMethodCheck(withKey: Bool) async throws {
        let (client, mock) = Fixtures.client {
            $0.retryPolicy = RetryPolicy(backoff: .none, condition: { response, _ in response.status.code == 500 })
        }
        mock.stub(.post, "/probe", with: [.status(500), .text("ok")])
        var probe = Probe(method: .post, path: "/probe")
        if withKey { probe.headers = ["Idempotency-Key": "k-1"] }
        if withKey {
            #expect(try await client.send(probe) == "ok")
        } else {
            await #expect(throws: CourierError.self) { try await client.send(probe) }
        }
        #expect(mock.recordedRequests.count == (withKey ? 2 : 1))
    }

    @Test("deciding restarts with a successor that has one retry fewer, in the same place")
    func successorReplacesCurrent() async throws {
        let retry = RetryDecision(remaining: 2)
        let decisions: [any Decision] = [ValidateStatusDecision(), retry, DataMappingDecision.mapEmptyBody()]
        let context = DecisionFixtures.context(decisions: decisions, index: 1)
        let action = try await retry.decide(DecisionFixtures.received(503), context: context)
        let next = try #require(action.restartDecisions)
        #expect(next.map(\.name) == ["validateStatus", "retry", "mapEmptyBody"])
        let successor = try #require(next[1] as? RetryDecision)
        #expect(successor.remaining == 1)
        let last = try await successor.decide(DecisionFixtures.received(503), context: context)
        let exhausted = try #require(last.restartDecisions?[1] as? RetryDecision)
        #expect(exhausted.remaining == 0)
        #expect(!exhausted.shouldApply(to: DecisionFixtures.received(503), context: context))
    }

    @Test("shouldApply needs retries left, a resendable body and a retryable response")
    func shouldApply() {
        let retry = RetryDecision(remaining: 1)
        let response = DecisionFixtures.received(503)
        #expect(retry.shouldApply(to: response, context: DecisionFixtures.context()))
        #expect(!retry.shouldApply(to: response, context: DecisionFixtures.context(canResendBody: false)))
        #expect(!retry.shouldApply(to: DecisionFixtures.received(200), context: DecisionFixtures.context()))
        #expect(!RetryDecision(remaining: 0).shouldApply(to: response, context: DecisionFixtures.context()))
        #expect(RetryDecision(remaining: -3).remaining == 0)
        #expect(retry.name == "retry")
    }
}
