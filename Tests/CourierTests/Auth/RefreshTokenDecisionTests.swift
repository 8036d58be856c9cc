import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("RefreshTokenDecision", .timeLimit(.minutes(1)))
struct RefreshTokenDecisionTests {
    typealias F = AuthFixtures

    @Test(
        "row 31: N concurrent 401s share exactly one refresh, and each request is replayed once", arguments: [50, 1000])
    func concurrentRejectionsShareOneRefresh(count: Int) async throws {
        let start = ContinuousClock.now
        let harness = try await F.harness()
        F.stubTokenEndpoint(harness.mock)
        let barrier = F.Barrier(count: count)
        // Every request signed with access-1 waits until all arrived, so all are rejected with v1.
        F.stubAPI(harness.mock, accepting: { "access-2" }, beforeRejecting: { await barrier.arrive() })

        let results = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<count {
                group.addTask { try await harness.client.send(Probe()) }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }

        #expect(results == Array(repeating: "ok", count: count))
        #expect(harness.tokenRequests.count == 1)
        let authorizations = harness.apiRequests.map { $0.head.headerFields[.authorization] }
        #expect(authorizations.filter { $0 == "Bearer access-1" }.count == count)
        #expect(authorizations.filter { $0 == "Bearer access-2" }.count == count)
        #expect(harness.apiRequests.allSatisfy { $0.attempt <= 2 })
        #expect(try await harness.authenticator.currentCredential()?.version == 2)
        print(
            "row 31 on MockTransport: \(count) requests, 1 refresh, \(harness.apiRequests.count) API sends in \(ContinuousClock.now - start)"
        )
    }

    @Test("row 32: a 401 for v1 that arrives after the refresh to v2 is replayed with v2, without a refresh")
    func lateRejectionOfOlderVersionReusesTheNewCredential() async throws {
        let harness = try await F.harness()
        F.stubTokenEndpoint(harness.mock)
        let slow = F.Gate()
        harness.mock.stub(nil, "/slow") { request in
            if request.head.headerFields[.authorization] == "Bearer access-2" { return .text("slow ok") }
            await slow.pass()
            return F.invalidToken
        }
        F.stubAPI(harness.mock, accepting: { "access-2" })

        let slowCall = Task { try await harness.client.send(Probe(path: "/slow")) }
        await slow.waitForArrivals(1)  // signed with v1 and held by the server
        #expect(try await harness.client.send(Probe()) == "ok")  // 401 → refresh to v2 → replay
        #expect(harness.tokenRequests.count == 1)
        await slow.open()

        #expect(try await slowCall.value == "slow ok")
        #expect(harness.tokenRequests.count == 1)
        let slowAuthorizations = harness.apiRequests.filter { $0.pathWithoutQuery == "/slow" }
            .map { $0.head.headerFields[.authorization] }
        #expect(slowAuthorizations == ["Bearer access-1", "Bearer access-2"])
    }

    @Test("a 401 whose refresh a sign-in overtakes is not sent again with the new session's credential")
    func signInDuringRefreshDoesNotReplay() async throws {
        let harness = try await F.harness()
        let gate = F.Gate()
        harness.mock.stub(.post, F.tokenPath) { _ in
            await gate.pass()
            return .json(raw: #"{"access_token":"access-2","token_type":"bearer","refresh_token":"refresh-2"}"#)
        }
        F.stubAPI(harness.mock, accepting: { "other-user" })

        let call = Task { try await harness.client.send(Probe()) }
        await gate.waitForArrivals(1)  // access-1 was rejected; its refresh is out
        try await harness.authenticator.signIn(Credential(accessToken: "other-user", refreshToken: "other"))
        await gate.open()

        let error = await expectCourierError { try await call.value }
        #expect(error?.response?.status.code == 401)
        #expect(harness.apiRequests.map { $0.head.headerFields[.authorization] } == ["Bearer access-1"])
        // The new session's calls go as it: the next one is signed by the other user.
        #expect(try await harness.client.send(Probe()) == "ok")
    }

    @Test("a credential installed from the fleet replays a 401 for the one it replaced, without a refresh")
    func fleetInstallKeepsSignatures() async throws {
        let harness = try await F.harness()
        F.stubTokenEndpoint(harness.mock)
        let slow = F.Gate()
        harness.mock.stub(nil, "/slow") { request in
            if request.head.headerFields[.authorization] == "Bearer access-2" { return .text("slow ok") }
            await slow.pass()
            return F.invalidToken
        }

        let slowCall = Task { try await harness.client.send(Probe(path: "/slow")) }
        await slow.waitForArrivals(1)  // signed with v1 and held by the server
        await harness.authenticator.install(
            Credential(accessToken: "access-2", refreshToken: "refresh-2"), keepingSignatures: true)
        await slow.open()

        #expect(try await slowCall.value == "slow ok")
        #expect(harness.tokenRequests.isEmpty)
    }

    @Test("two authenticators on one store: the second adopts the first's renewal, not spending a rotated token")
    func sharedStoreRenewal() async throws {
        let shared = InMemoryCredentialStore()
        let harness = try await F.harness(store: shared)
        // The endpoint rotates refresh tokens and refuses one used twice (reuse detection, RFC 9700 §4.14.2).
        let used = F.Shared<Set<String>>([])
        let issued = F.Counter()
        harness.mock.stub(.post, F.tokenPath) { request in
            let sent = request.bodyText ?? ""
            if used.value.contains(sent) { return .json(raw: #"{"error":"invalid_grant"}"#, status: 400) }
            used.update { _ = $0.insert(sent) }
            let number = issued.next() + 1
            return .json(raw: #"{"access_token":"access-\#(number)","refresh_token":"refresh-\#(number)"}"#)
        }
        let other = Authenticator(
            store: shared,
            refresher: OAuth2RefreshTokenRefresher(client: harness.client, path: F.tokenPath, clientID: "courier-tests")
        )
        let otherVersion = try #require(try await other.currentCredential()?.version)

        let first = try await harness.authenticator.refresh(rejected: 1)
        let second = try await other.refresh(rejected: otherVersion)

        #expect(first.accessToken == "access-2")
        #expect(second.accessToken == "access-2")
        #expect(harness.tokenRequests.count == 1)
        #expect(await shared.load()?.refreshToken == "refresh-2")
    }

    @Test("a rejected one-shot upload is not replayed, but the next request renews the credential before it goes")
    func oneShotRejectionRenewsForTheNext() async throws {
        let harness = try await F.harness()
        F.stubTokenEndpoint(harness.mock)
        F.stubAPI(harness.mock, accepting: { "access-2" })
        var upload = Probe(method: .put)
        upload.body = .stream(DecisionFixtures.oneShotBody("once"))

        let error = await expectCourierError { try await harness.client.send(upload) }
        #expect(error?.response?.status.code == 401)
        #expect(harness.tokenRequests.isEmpty)

        var second = Probe(method: .put)
        second.body = .stream(DecisionFixtures.oneShotBody("twice"))
        #expect(try await harness.client.send(second) == "ok")
        #expect(harness.tokenRequests.count == 1)
        #expect(
            harness.apiRequests.map { $0.head.headerFields[.authorization] } == ["Bearer access-1", "Bearer access-2"])
    }

    @Test("a server that always answers 401 gets one refresh and one replay, then unacceptableStatus")
    func refreshesAtMostOncePerCall() async throws {
        let harness = try await F.harness()
        F.stubTokenEndpoint(harness.mock)
        harness.mock.stub(nil, "/probe") { _ in F.invalidToken }

        let error = await expectCourierError { try await harness.client.send(Probe()) }

        #expect(error?.code == .unacceptableStatus)
        #expect(error?.response?.status.code == 401)
        #expect(error?.trace.description == "refreshToken ↻ restart → validateStatus ✗")
        #expect(harness.tokenRequests.count == 1)
        #expect(
            harness.apiRequests.map { $0.head.headerFields[.authorization] } == [
                "Bearer access-1", "Bearer access-2",
            ])
    }

    @Test(
        "row 34: a 403 insufficient_scope or a 401 challenging another scheme is not refreshed",
        arguments: [
            (403, #"Bearer realm="api", error="insufficient_scope", scope="admin""#),
            (401, #"Basic realm="downstream""#),
            (401, #"Negotiate abc123=="#),
            (401, #"Bearer error="insufficient_scope""#),
        ]
    )
    func otherChallengesAreNotRefreshed(status: Int, challenge: String) async throws {
        let harness = try await F.harness()
        F.stubTokenEndpoint(harness.mock)
        harness.mock.stub(nil, "/probe", with: .status(status, headerFields: [.wwwAuthenticate: challenge]))

        let error = await expectCourierError { try await harness.client.send(Probe()) }

        #expect(error?.code == .unacceptableStatus)
        #expect(error?.response?.status.code == status)
        #expect(error?.trace.description == "validateStatus ✗")
        #expect(harness.tokenRequests.isEmpty)
        #expect(harness.apiRequests.count == 1)
    }

    @Test(
        "a 401 with no challenge or a Bearer one is a rejection; other statuses and schemes are not",
        arguments: [
            (401, nil, true),
            (401, "Bearer", true),
            (401, #"Bearer realm="a,b", error="invalid_token", error_description="expired""#, true),
            (401, #"Basic realm="x", Bearer realm="y""#, true),
            (401, #"Basic realm="Bearer""#, false),
            (401, #"Digest realm="x", nonce="abc""#, false),
            (401, #"Bearer error="insufficient_scope""#, false),
            (403, #"Bearer error="invalid_token""#, false),
            (200, nil, false),
        ] as [(Int, String?, Bool)]
    )
    func classifiesChallenges(status: Int, challenge: String?, expected: Bool) {
        var fields = HTTPFields()
        if let challenge { fields[.wwwAuthenticate] = challenge }
        let response = ReceivedResponse(head: HTTPResponse(status: .init(code: status), headerFields: fields))
        #expect(RefreshTokenDecision.isBearerRejection(response) == expected)
    }

    @Test("a custom predicate (the seeds' 403 with error code 999) triggers the refresh")
    func customPredicateTriggersRefresh() async throws {
        let harness = try await F.harness(rejectedWhen: { response in
            response.status.code == 403 && String(decoding: response.body, as: UTF8.self).contains(#""code":999"#)
        })
        F.stubTokenEndpoint(harness.mock)
        harness.mock.stub(nil, "/probe") { request in
            if request.head.headerFields[.authorization] == "Bearer access-2" { return .text("ok") }
            return .json(raw: #"{"code":999,"reason":"Invalid Token."}"#, status: 403)
        }

        #expect(try await harness.client.send(Probe()) == "ok")
        #expect(harness.tokenRequests.count == 1)
    }

    @Test("the log line of a refreshed call reads [refreshToken ↻ restart → validateStatus ✓ → parse ✓]")
    func traceOfARefreshedCall() async throws {
        let harness = try await F.harness()
        F.stubTokenEndpoint(harness.mock)
        F.stubAPI(harness.mock, accepting: { "access-2" })

        _ = try await harness.client.send(Probe())

        let line = try #require(harness.log.messages.last { $0.contains("/probe") })
        #expect(line.contains("[refreshToken ↻ restart → validateStatus ✓ → parse ✓]"))
    }

    @Test("a 401 to a request the authenticator did not sign is left to the other decisions")
    func unsignedRequestsAreNotRefreshed() async throws {
        let harness = try await F.harness(signIn: nil)
        F.stubTokenEndpoint(harness.mock)
        harness.mock.stub(nil, "/probe", with: F.invalidToken)

        let error = await expectCourierError { try await harness.client.send(Probe()) }

        #expect(error?.code == .unacceptableStatus)
        #expect(harness.tokenRequests.isEmpty)
        #expect(harness.apiRequests.first?.head.headerFields[.authorization] == nil)
    }

    @Test("authenticate(with:) puts the decision right after the redirect decision and replaces an earlier one")
    func installsAfterRedirect() async throws {
        let authenticator = Authenticator(refresher: F.ScriptedRefresher())
        var configuration = Client.Configuration(decisions: [RedirectDecision(), .validateStatus()])
        configuration.authenticate(with: authenticator)
        configuration.authenticate(with: authenticator)

        #expect(configuration.decisions.map(\.name) == ["redirect", "refreshToken", "validateStatus"])
        #expect(configuration.adapters.filter { $0 is AuthenticationAdapter }.count == 1)
        #expect(configuration.adapters.last?.name == "authentication")
    }
}
