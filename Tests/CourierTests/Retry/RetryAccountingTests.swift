import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// Reliability row 48: one retry mechanism per call, and attempts that are the requests the server saw.
@Suite("Retry accounting", .timeLimit(.minutes(1)))
struct RetryAccountingTests {
    /// A client with the DEFAULT retry policy (the fixture elsewhere turns it off, which hid stacked retries).
    static func defaultClient() -> (Client, MockTransport, DecisionFixtures.RecordingClock) {
        let clock = DecisionFixtures.RecordingClock()
        let mock = MockTransport()
        let configuration = Client.Configuration(clock: clock)
        return (Client(server: Fixtures.server, transport: mock, configuration: configuration), mock, clock)
    }

    @Test("a request's .retry(2) replaces the client's default policy: a failing GET is sent 3 times, not 5")
    func requestRetryReplacesClientPolicy() async throws {
        let (client, mock, _) = Self.defaultClient()
        mock.stub(.get, "/probe", with: Array(repeating: MockResponse.status(503), count: 6))
        var probe = Probe()
        probe.decisionList = [.retry(2), .validateStatus()]
        let error = await expectCourierError { try await client.send(probe) }
        #expect(error?.code == .unacceptableStatus)
        #expect(mock.recordedRequests.count == 3)
        #expect(error?.trace.description == "retry ↻ restart → retry ↻ restart → validateStatus ✗")
        #expect(error?.trace.steps.map(\.attempt).max() == 3)
    }

    @Test("the client's default policy alone: 3 requests, and the trace's attempts are the requests sent")
    func defaultPolicyAlone() async throws {
        let (client, mock, clock) = Self.defaultClient()
        mock.stub(.get, "/probe", with: Array(repeating: MockResponse.status(503), count: 6))
        let error = await expectCourierError { try await client.send(Probe()) }
        #expect(mock.recordedRequests.count == 3)
        #expect(clock.sleeps.count == 2)
        #expect(error?.trace.steps.map(\.attempt).max() == mock.recordedRequests.count)
    }

    /// A client whose own decisions end with a status check, retrying with no pause.
    static func clientWithAStatusCheck() -> (Client, MockTransport) {
        let mock = MockTransport()
        let configuration = Client.Configuration(
            decisions: [RedirectDecision(), .validateStatus()], retryPolicy: RetryPolicy(backoff: .none))
        return (Client(server: Fixtures.server, transport: mock, configuration: configuration), mock)
    }

    @Test("a status check among the client's decisions: the client's policy and a request's still retry a 503")
    func statusCheckInTheClientsChain() async throws {
        let (client, mock) = Self.clientWithAStatusCheck()
        mock.stub(.get, "/probe", with: [.status(503), .status(503), .text("ok"), .status(503), .text("ok")])
        #expect(try await client.send(Probe()) == "ok")
        #expect(mock.recordedRequests.count == 3)

        var probe = Probe()
        probe.retryPolicy = RetryPolicy(maxRetries: 1, backoff: .none)
        #expect(try await client.send(probe) == "ok")
        #expect(mock.recordedRequests.count == 5)
    }

    @Test("a status check among the client's decisions: a request's own .retry(n) decision still retries a 503")
    func requestRetryDecisionBeforeTheClientsStatusCheck() async throws {
        let (client, mock) = Self.clientWithAStatusCheck()
        mock.stub(.get, "/probe", with: [.status(503), .status(503), .text("ok")])
        var probe = Probe()
        probe.decisionList = [.retry(5), .validateStatus()]
        #expect(try await client.send(probe) == "ok")
        #expect(mock.recordedRequests.count == 3)

        // Two retry decisions, the second for 503s: both go before the client's check, in their order.
        mock.stub(.get, "/probe", with: [.status(503), .text("ok")])
        probe.decisionList = [
            .retry(1, when: { response, _ in response.status.code == 429 }), .retry(2), .validateStatus(),
        ]
        #expect(try await client.send(probe) == "ok")
        #expect(mock.recordedRequests.count == 5)
    }

    @Test("a retry decision in the client's chain is not doubled by the client's policy")
    func clientChainRetryNotDoubled() async throws {
        let clock = DecisionFixtures.RecordingClock()
        let mock = MockTransport()
        let configuration = Client.Configuration(decisions: [RedirectDecision(), .retry(1)], clock: clock)
        let client = Client(server: Fixtures.server, transport: mock, configuration: configuration)
        mock.stub(.get, "/probe", with: Array(repeating: MockResponse.status(503), count: 6))
        _ = await expectCourierError { try await client.send(Probe()) }
        #expect(mock.recordedRequests.count == 2)
    }

    @Test(
        "default retryable transport failures are retried twice; TLS, DNS, offline and framing failures never",
        arguments: [
            (CourierError.Code.connectionRefused, 3), (.connectionReset, 3), (.connectTimeout, 3), (.idleTimeout, 1),
            (.networkUnreachable, 3), (.truncatedResponse, 3), (.connectionFailed, 3), (.hostNotFound, 1),
            (.notConnectedToInternet, 1), (.untrustedCertificate, 1), (.pinMismatch, 1), (.certificateExpired, 1),
            (.malformedResponse, 1), (.decompressionLimit, 1), (.timedOut, 1),
        ])
    func retryableErrors(code: CourierError.Code, expectedRequests: Int) async throws {
        let (client, mock, _) = Self.defaultClient()
        let failure = CourierError(code: code, stage: .transport)
        mock.stub(
            .get, "/probe",
            with: Array(repeating: MockResponse.status(200, fault: .failBeforeResponse(failure)), count: 4))
        let error = await expectCourierError { try await client.send(Probe()) }
        #expect(error?.code == code)
        #expect(mock.recordedRequests.count == expectedRequests)
    }

    @Test(
        "a POST is retried after a failure that proves nothing was sent, and only then (unless the policy says no)",
        arguments: [(true, true, 3), (false, true, 1), (true, false, 1)])
    func unsentPost(unsent: Bool, policyRetriesUnsent: Bool, expectedRequests: Int) async throws {
        let clock = DecisionFixtures.RecordingClock()
        let mock = MockTransport()
        let policy = RetryPolicy(retriesUnsentRequests: policyRetriesUnsent)
        let client = Client(
            server: Fixtures.server, transport: mock,
            configuration: Client.Configuration(retryPolicy: policy, clock: clock))
        let refused = CourierError(code: .connectionRefused, stage: .transport, isKnownUnsent: unsent)
        mock.stub(
            .post, "/probe",
            with: Array(repeating: MockResponse.status(200, fault: .failBeforeResponse(refused)), count: 4))
        let error = await expectCourierError { try await client.send(Probe(method: .post)) }
        #expect(error?.code == .connectionRefused)
        #expect(mock.recordedRequests.count == expectedRequests)
        // Not a code the policy retries: the proof of "unsent" does not make it one.
        let dns = CourierError(code: .hostNotFound, stage: .transport, isKnownUnsent: true)
        mock.stub(.post, "/dns", with: [.status(200, fault: .failBeforeResponse(dns)), .text("never")])
        _ = await expectCourierError { try await client.send(Probe(method: .post, path: "/dns")) }
        #expect(mock.recordedRequests.count == expectedRequests + 1)
    }

    @Test("a stale connection (reset before the head) is retried at once the first time, then with backoff")
    func staleConnectionRetriedAtOnce() async throws {
        let (client, mock, clock) = Self.defaultClient()
        let reset = CourierError(code: .connectionReset, stage: .transport)
        mock.stub(
            .get, "/probe",
            with: [
                .status(200, fault: .failBeforeResponse(reset)), .status(200, fault: .failBeforeResponse(reset)),
                .text("ok"),
            ])
        #expect(try await client.send(Probe()) == "ok")
        #expect(mock.recordedRequests.count == 3)
        // The first retry takes no pause (no sleep at all); the second waits its backoff.
        #expect(clock.sleeps.count == 1)
    }

    @Test("which failures are retried is configurable: by code, or by a predicate")
    func configurableErrors() async throws {
        let clock = DecisionFixtures.RecordingClock()
        let mock = MockTransport()
        var policy = RetryPolicy(backoff: .none, retryableErrors: [.hostNotFound])
        var configuration = Client.Configuration(retryPolicy: policy, clock: clock)
        var client = Client(server: Fixtures.server, transport: mock, configuration: configuration)
        let dns = CourierError(code: .hostNotFound, stage: .transport)
        mock.stub(.get, "/probe", with: [.status(200, fault: .failBeforeResponse(dns)), .text("resolved")])
        #expect(try await client.send(Probe()) == "resolved")
        #expect(mock.recordedRequests.count == 2)

        policy = RetryPolicy(backoff: .none, errorCondition: { _, _ in false })
        configuration.retryPolicy = policy
        client = Client(server: Fixtures.server, transport: mock, configuration: configuration)
        let refused = CourierError(code: .connectionRefused, stage: .transport)
        mock.stub(.get, "/other", with: [.status(200, fault: .failBeforeResponse(refused)), .text("never")])
        var probe = Probe()
        probe.path = "/other"
        let error = await expectCourierError { try await client.send(probe) }
        #expect(error?.code == .connectionRefused)
        #expect(mock.recordedRequests.count == 3)
    }

    @Test("a retry that maxRestarts would refuse is not made: no back-off, no retry in the trace, the failure stands")
    func retryWithinRestartBudget() async throws {
        let clock = DecisionFixtures.RecordingClock()
        let mock = MockTransport()
        let configuration = Client.Configuration(retryPolicy: RetryPolicy(maxRetries: 3), maxRestarts: 1, clock: clock)
        let client = Client(server: Fixtures.server, transport: mock, configuration: configuration)
        let refused = CourierError(code: .connectionRefused, stage: .transport)
        mock.stub(.get, "/refused", with: Array(repeating: .status(200, fault: .failBeforeResponse(refused)), count: 4))
        mock.stub(.get, "/busy", with: Array(repeating: .status(503), count: 4))

        let failure = await expectCourierError { try await client.send(Probe(path: "/refused")) }
        #expect(failure?.code == .connectionRefused)
        let busy = await expectCourierError { try await client.send(Probe(path: "/busy")) }
        #expect(busy?.code == .unacceptableStatus)
        #expect(busy?.response?.status.code == 503)
        for error in [failure, busy] {
            let retries = error?.trace.steps.filter { $0.name == "retry" && $0.outcome == .restarted }
            #expect(retries?.count == 1, "\(String(describing: error?.trace))")
        }
        #expect(mock.recordedRequests.count == 4)
        #expect(clock.sleeps.count == 2)
    }
}
