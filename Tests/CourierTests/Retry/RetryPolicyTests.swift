import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// Reliability rows 25–30 against `MockTransport` with an injected clock: retries take no real time.
@Suite("RetryPolicy", .timeLimit(.minutes(1)))
struct RetryPolicyTests {
    static let noJitter = RetryPolicy.Backoff.exponential(jitter: false)

    /// A client with `policy` as its retry policy and a recording clock.
    static func client(
        _ policy: RetryPolicy = RetryPolicy(backoff: noJitter),
        timeout: Duration? = nil
    ) -> (Client, MockTransport, DecisionFixtures.RecordingClock) {
        let clock = DecisionFixtures.RecordingClock()
        let mock = MockTransport()
        let configuration = Client.Configuration(retryPolicy: policy, timeout: timeout, clock: clock)
        return (Client(server: Fixtures.server, transport: mock, configuration: configuration), mock, clock)
    }

    @Test("the default policy: 2 retries, exponential pauses from 0.5 s, full jitter within the bound")
    func defaults() {
        let policy = RetryPolicy.default
        #expect(policy.maxRetries == 2)
        #expect(policy.retryableStatuses == [408, 429, 500, 502, 503, 504])
        #expect(policy.retryableMethods == [.get, .head, .options, .put, .delete, .trace])
        #expect(Self.noJitter.delay(forRetry: 1) == .milliseconds(500))
        #expect(Self.noJitter.delay(forRetry: 2) == .seconds(1))
        #expect(RetryPolicy.Backoff.exponential(maximum: .seconds(3), jitter: false).delay(forRetry: 10) == .seconds(3))
        for retry in 1...6 {
            let pause = policy.backoff.delay(forRetry: retry)
            #expect(pause >= .zero && pause <= Self.noJitter.delay(forRetry: retry))
        }
    }

    @Test("exponential backoff stays at its maximum for any retry number, without overflowing a Duration")
    func backoffCap() {
        #expect(Self.noJitter.delay(forRetry: 69) == .seconds(30))
        #expect(Self.noJitter.delay(forRetry: 70) == .seconds(30))
        #expect(Self.noJitter.delay(forRetry: .max) == .seconds(30))
        let steep = RetryPolicy.Backoff.exponential(initial: .seconds(5), multiplier: 10, jitter: false)
        #expect(steep.delay(forRetry: 21) == .seconds(30))
        #expect(RetryPolicy.Backoff.exponential(jitter: true).delay(forRetry: 1_000) <= .seconds(30))
        #expect(RetryPolicy.Backoff.exponential(initial: .zero, jitter: false).delay(forRetry: 2_000) == .zero)
    }

    @Test(
        "row 27: retryable statuses on GET are retried twice with backoff, then the status fails the call",
        arguments: [408, 429, 500, 502, 503, 504])
    func retryableStatuses(code: Int) async throws {
        let (client, mock, clock) = Self.client()
        mock.stub(.get, "/probe", with: Array(repeating: MockResponse.status(code), count: 3))
        let error = await expectCourierError { try await client.send(Probe()) }
        #expect(error?.code == .unacceptableStatus)
        #expect(error?.response?.status.code == code)
        #expect(mock.recordedRequests.count == 3)
        #expect(clock.sleeps == [.milliseconds(500), .seconds(1)])
        #expect(error?.trace.description == "retry ↻ restart → retry ↻ restart → validateStatus ✗")
    }

    @Test(
        "row 27: POST, PATCH and non-retryable statuses are never retried",
        arguments: [(HTTPRequest.Method.post, 503), (.patch, 503), (.get, 400), (.get, 404), (.get, 501)])
    func notRetried(method: HTTPRequest.Method, code: Int) async throws {
        let (client, mock, clock) = Self.client()
        mock.stub(method, "/probe", with: Array(repeating: MockResponse.status(code), count: 3))
        _ = await expectCourierError { try await client.send(Probe(method: method)) }
        #expect(mock.recordedRequests.count == 1)
        #expect(clock.sleeps.isEmpty)
    }

    @Test("a POST answered 408 (the server did not get the whole request) is sent again once; a second 408 fails")
    func requestTimeoutRetriedOnceForAnyMethod() async throws {
        let (client, mock, _) = Self.client()
        mock.stub(.post, "/probe", with: [.status(408), .text("created", status: 201)])
        var probe = Probe(method: .post)
        probe.body = .json(["item": 1])
        #expect(try await client.send(probe) == "created")
        #expect(mock.recordedRequests.count == 2)
        #expect(mock.recordedRequests.allSatisfy { $0.bodyText == #"{"item":1}"# })

        let (again, twice, _) = Self.client()
        twice.stub(.post, "/probe", with: [.status(408), .status(408), .text("created", status: 201)])
        let error = await expectCourierError { try await again.send(probe) }
        #expect(error?.response?.status.code == 408)
        #expect(twice.recordedRequests.count == 2)

        // retriesUnsentRequests off: a POST is never sent twice.
        let (strict, strictMock, _) = Self.client(RetryPolicy(backoff: Self.noJitter, retriesUnsentRequests: false))
        strictMock.stub(.post, "/probe", with: [.status(408), .text("created", status: 201)])
        _ = await expectCourierError { try await strict.send(probe) }
        #expect(strictMock.recordedRequests.count == 1)
    }

    @Test("a policy's own retryable statuses are retried whatever their class, a 2xx included")
    func statusesBelowTheDefaults() async throws {
        let (client, mock, clock) = Self.client(RetryPolicy(backoff: Self.noJitter, retryableStatuses: [202, 503]))
        mock.stub(.get, "/probe", with: [.text("pending", status: 202), .text("done", status: 201)])
        #expect(try await client.send(Probe()) == "done")
        #expect(mock.recordedRequests.count == 2)
        #expect(clock.sleeps == [.milliseconds(500)])
    }

    @Test("a POST with an Idempotency-Key is retried, sending the same key every time")
    func idempotencyKey() async throws {
        let (client, mock, _) = Self.client()
        mock.stub(.post, "/probe", with: [.status(503), .status(502), .text("created", status: 201)])
        var probe = Probe(method: .post)
        probe.headers = ["Idempotency-Key": "order-42"]
        probe.body = .json(["item": 1])
        #expect(try await client.send(probe) == "created")
        let keys = mock.recordedRequests.map { $0.head.headerFields[HTTPField.Name("Idempotency-Key")!] }
        #expect(keys == ["order-42", "order-42", "order-42"])
        #expect(mock.recordedRequests.allSatisfy { $0.bodyText == #"{"item":1}"# })
    }

    @Test("row 28: Retry-After in seconds is honoured: never retried earlier")
    func retryAfterSeconds() async throws {
        let (client, mock, clock) = Self.client()
        mock.stub(.get, "/probe", with: [.status(503, headerFields: [.retryAfter: "3"]), .text("ok")])
        #expect(try await client.send(Probe()) == "ok")
        #expect(clock.sleeps == [.seconds(3)])
    }

    @Test("row 28: two Retry-After fields (a gateway's and the app's) ask for the longer wait, not none")
    func retryAfterRepeated() async throws {
        let (client, mock, clock) = Self.client()
        var headers = HTTPFields()
        headers.append(HTTPField(name: .retryAfter, value: "3"))
        headers.append(HTTPField(name: .retryAfter, value: "5"))
        mock.stub(.get, "/probe", with: [.status(429, headerFields: headers), .text("ok")])
        #expect(try await client.send(Probe()) == "ok")
        #expect(clock.sleeps == [.seconds(5)])
    }

    @Test("row 28: a Retry-After of Int64.max seconds under a policy with no cap waits a bounded time, not a trap")
    func retryAfterHugeWithoutCap() async throws {
        let (client, mock, clock) = Self.client(RetryPolicy(backoff: Self.noJitter, maxRetryAfter: .seconds(Int64.max)))
        mock.stub(
            .get, "/probe", with: [.status(503, headerFields: [.retryAfter: "\(Int64.max)"]), .text("ok")])
        #expect(try await client.send(Probe()) == "ok")
        #expect(clock.sleeps == [.seconds(Int64.max / 1_000_000_000)])
    }

    @Test("a 503 whose page is over the size limit or cut short is still a 503: retried after its Retry-After")
    func errorBodyOverTheLimitKeepsTheStatus() async throws {
        let (client, mock, clock) = Self.client()
        let page = String(repeating: "x", count: 100)
        mock.stub(
            .get, "/probe",
            with: [
                .text(page, status: 503, headerFields: [.retryAfter: "2"]),
                .text(page, status: 503, headerFields: [.retryAfter: "3"], fault: .resetMidBody(afterBytes: 5)),
                .text("ok"),
            ])
        var probe = Probe()
        probe.maxResponseBodySize = 16
        #expect(try await client.send(probe) == "ok")
        #expect(mock.recordedRequests.count == 3)
        #expect(clock.sleeps == [.seconds(2), .seconds(3)])

        // Not retried, the status still says what happened, not the body's size.
        let (plain, plainMock, _) = Self.client(.disabled)
        plainMock.stub(.get, "/probe", with: [.text(page, status: 404), .text(page, status: 404)])
        let error = await expectCourierError { try await plain.send(probe) }
        #expect(error?.code == .unacceptableStatus)
        #expect(error?.response?.status.code == 404)

        // No decision acts on the status: the body's failure is the call's, never an empty success.
        probe.decisionList = []
        let unread = await expectCourierError { try await plain.send(probe) }
        #expect(unread?.code == .bodyTooLarge)
    }

    @Test(
        "a non-2xx page over the size limit keeps its status with a cache and with de-duplication too",
        arguments: [(true, false), (false, true), (true, true)])
    func errorBodyOverTheLimitKeepsTheStatusThroughTheCache(caches: Bool, deduplicates: Bool) async throws {
        let clock = DecisionFixtures.RecordingClock()
        let mock = MockTransport()
        var configuration = Client.Configuration(retryPolicy: RetryPolicy(backoff: Self.noJitter), clock: clock)
        if caches { configuration.cache = try HTTPCache(storage: .memory(byteLimit: 1 << 20)) }
        configuration.deduplicatesRequests = deduplicates
        let client = Client(server: Fixtures.server, transport: mock, configuration: configuration)
        let page = String(repeating: "x", count: 100)
        var probe = Probe()
        probe.maxResponseBodySize = 16

        mock.stub(.get, "/probe", with: [.text(page, status: 503, headerFields: [.retryAfter: "2"]), .text("ok")])
        #expect(try await client.send(probe) == "ok")
        #expect(clock.sleeps == [.seconds(2)])

        mock.stub(.get, "/missing", with: .text(page, status: 404))
        probe.path = "/missing"
        let error = await expectCourierError { try await client.send(probe) }
        #expect(error?.code == .unacceptableStatus, "\(String(describing: error))")
        #expect(error?.response?.status.code == 404)
    }

    @Test("row 28: an HTTP-date Retry-After counts from the response's Date, not the local clock")
    func retryAfterDate() async throws {
        let (client, mock, clock) = Self.client()
        let headers: HTTPFields = [
            .date: "Sun, 06 Nov 1994 08:49:37 GMT", .retryAfter: "Sun, 06 Nov 1994 08:49:42 GMT",
        ]
        mock.stub(.get, "/probe", with: [.status(429, headerFields: headers), .text("ok")])
        #expect(try await client.send(Probe()) == "ok")
        #expect(clock.sleeps == [.seconds(5)])
    }

    @Test("row 28: -1 and garbage are ignored (the backoff applies)", arguments: ["-1", "soon", "1.5", ""])
    func retryAfterGarbage(value: String) async throws {
        let (client, mock, clock) = Self.client()
        mock.stub(.get, "/probe", with: [.status(503, headerFields: [.retryAfter: value]), .text("ok")])
        #expect(try await client.send(Probe()) == "ok")
        #expect(clock.sleeps == [.milliseconds(500)])
    }

    @Test(
        "row 28: a Retry-After above the cap fails at once with the value in the error",
        arguments: ["99999999", "999999999999999999999"])
    func retryAfterTooLong(value: String) async throws {
        let (client, mock, clock) = Self.client()
        mock.stub(.get, "/probe", with: [.status(503, headerFields: [.retryAfter: value]), .text("ok")])
        let error = await expectCourierError { try await client.send(Probe()) }
        #expect(error?.code == .unacceptableStatus)
        #expect(error?.message?.contains("retry after") == true)
        #expect(mock.recordedRequests.count == 1)
        #expect(clock.sleeps.isEmpty)
    }

    @Test("row 28: above the cap, the status check's error stands, with the server's decoded API error and the wait")
    func retryAfterTooLongKeepsAPIError() async throws {
        struct APIError: Decodable, Error { let reason: String }
        let (client, mock, clock) = Self.client()
        mock.stub(
            .get, "/probe",
            with: [.json(["reason": "maintenance"], status: 503, headerFields: [.retryAfter: "7200"]), .text("ok")])
        var probe = Probe()
        probe.decisionList = [.validateStatus(decoding: APIError.self)]
        let error = await expectCourierError { try await client.send(probe) }
        #expect(error?.code == .unacceptableStatus)
        #expect((error?.underlyingError as? APIError)?.reason == "maintenance")
        #expect(
            error?.message
                == "the server answered 503 Service Unavailable, and asks to retry after 7200 s, longer than the 120 s "
                + "this client waits")
        #expect(error?.trace.description == "retry ✗")
        #expect(mock.recordedRequests.count == 1)
        #expect(clock.sleeps.isEmpty)
    }

    @Test("above the cap without a status check after it (a generated OpenAPI client's chain), the 429 is the response")
    func retryAfterTooLongWithoutAStatusCheck() async throws {
        let (client, mock, clock) = Self.client()
        mock.stub(
            .get, "/probe", with: [.text("slow down", status: 429, headerFields: [.retryAfter: "3600"]), .text("ok")])
        var probe = Probe()
        probe.decisionList = []
        #expect(try await client.send(probe) == "slow down")
        #expect(mock.recordedRequests.count == 1)
        #expect(clock.sleeps.isEmpty)
    }

    @Test("rows 25–26: transient transport failures are retried; the partial body is thrown away")
    func transportFailures() async throws {
        let (client, mock, clock) = Self.client()
        let refused = CourierError(code: .connectionFailed, stage: .transport, message: "connection refused")
        mock.stub(
            .get, "/probe",
            with: [
                .status(200, fault: .failBeforeResponse(refused)),
                .text("partial body", fault: .resetMidBody(afterBytes: 4)),
                .text("whole body"),
            ])
        #expect(try await client.send(Probe()) == "whole body")
        #expect(mock.recordedRequests.count == 3)
        #expect(clock.sleeps == [.milliseconds(500), .seconds(1)])
    }

    @Test(
        "row 29: protocol errors, size limits and POSTs are never retried after a transport failure",
        arguments: [CourierError.Code.malformedResponse, .decompressionLimit, .invalidHeader])
    func nonTransientFailures(code: CourierError.Code) async throws {
        let (client, mock, _) = Self.client()
        let failure = CourierError(code: code, stage: .transport)
        mock.stub(.get, "/probe", with: [.status(200, fault: .failBeforeResponse(failure)), .text("ok")])
        let error = await expectCourierError { try await client.send(Probe()) }
        #expect(error?.code == code)
        #expect(mock.recordedRequests.count == 1)

        let refused = CourierError(code: .connectionFailed, stage: .transport)
        mock.stub(.post, "/probe", with: [.status(200, fault: .failBeforeResponse(refused)), .text("ok")])
        _ = await expectCourierError { try await client.send(Probe(method: .post)) }
        #expect(mock.recordedRequests.count == 2)
    }

    @Test("a one-shot body is never replayed")
    func oneShotBody() async throws {
        let (client, mock, _) = Self.client()
        mock.stub(.put, "/probe", with: [.status(503), .text("ok")])
        var probe = Probe(method: .put)
        probe.body = .stream(DecisionFixtures.oneShotBody("once"))
        let error = await expectCourierError { try await client.send(probe) }
        #expect(error?.response?.status.code == 503)
        #expect(mock.recordedRequests.count == 1)
    }

    @Test("a request's own policy overrides the client's")
    func perRequestPolicy() async throws {
        struct NoRetry: Request {
            typealias Response = String
            var path: String { "/probe" }
            var retryPolicy: RetryPolicy? { .disabled }
        }
        let (client, mock, _) = Self.client()
        mock.stub(.get, "/probe", with: [.status(503), .text("ok")])
        _ = await expectCourierError { try await client.send(NoRetry()) }
        #expect(mock.recordedRequests.count == 1)
    }

    @Test("a pause that would pass the call's deadline is not taken")
    func deadlineBudget() async throws {
        let (client, mock, clock) = Self.client(RetryPolicy(backoff: .constant(.seconds(30))), timeout: .seconds(5))
        mock.stub(.get, "/probe", with: [.status(503), .text("ok")])
        let error = await expectCourierError { try await client.send(Probe()) }
        #expect(error?.code == .unacceptableStatus)
        #expect(mock.recordedRequests.count == 1)
        #expect(clock.sleeps.isEmpty)
    }

    @Test("row 30: cancellation during the backoff returns CancellationError with no further attempt")
    func cancellationDuringBackoff() async throws {
        let clock = DecisionFixtures.SuspendingClock()
        let mock = MockTransport()
        let client = Client(
            server: Fixtures.server,
            transport: mock,
            configuration: Client.Configuration(
                retryPolicy: RetryPolicy(backoff: .constant(.seconds(60))), clock: clock)
        )
        mock.stub(.get, "/probe", with: [.status(503), .text("ok")])
        let task = Task { try await client.send(Probe()) }
        var sleeps = clock.sleepStarted.makeAsyncIterator()
        #expect(await sleeps.next() == .seconds(60))
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(mock.recordedRequests.count == 1)
    }
}
