import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("Authenticator", .timeLimit(.minutes(1)))
struct AuthenticatorTests {
    typealias F = AuthFixtures

    // MARK: - Single flight (unit)

    @Test("concurrent refreshes of the same version share one call to the refresher")
    func singleFlight() async throws {
        let gate = F.Gate()
        let refresher = F.ScriptedRefresher(gate: gate)
        let authenticator = Authenticator(refresher: refresher, now: { F.start })
        try await authenticator.signIn(F.signedIn())

        let waiters = (0..<20).map { _ in Task { try await authenticator.refresh(rejected: 1) } }
        await gate.waitForArrivals(1)
        await gate.open()
        var versions: [Int] = []
        for waiter in waiters { versions.append(try await waiter.value.version) }

        #expect(refresher.calls.count == 1)
        #expect(versions == Array(repeating: 2, count: 20))
    }

    @Test("a rejection of an older version returns the current credential without refreshing")
    func olderVersionGetsCurrent() async throws {
        let refresher = F.ScriptedRefresher()
        let authenticator = Authenticator(refresher: refresher, now: { F.start })
        try await authenticator.signIn(F.signedIn())

        let second = try await authenticator.refresh(rejected: 1)
        let again = try await authenticator.refresh(rejected: 1)

        #expect(refresher.calls.count == 1)
        #expect(second.version == 2 && second.accessToken == "access-2")
        #expect(again == second)
    }

    @Test("cancelling one waiter ends its wait at once and leaves the refresh to the others")
    func cancellingAWaiter() async throws {
        let gate = F.Gate()
        let refresher = F.ScriptedRefresher(gate: gate)
        let authenticator = Authenticator(refresher: refresher, now: { F.start })
        try await authenticator.signIn(F.signedIn())

        let cancelled = Task { try await authenticator.refresh(rejected: 1) }
        let kept = Task { try await authenticator.refresh(rejected: 1) }
        await gate.waitForArrivals(1)
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        await gate.open()

        #expect(try await kept.value.accessToken == "access-2")
        #expect(refresher.calls.count == 1)
    }

    @Test("a sign-out during a refresh ends it with reauthenticationRequired and does not resurrect the session")
    func signOutDuringRefresh() async throws {
        let gate = F.Gate()
        let store = InMemoryCredentialStore()
        let authenticator = Authenticator(store: store, refresher: F.ScriptedRefresher(gate: gate), now: { F.start })
        try await authenticator.signIn(F.signedIn())

        let waiter = Task { try await authenticator.refresh(rejected: 1) }
        await gate.waitForArrivals(1)
        try await authenticator.signOut()
        await gate.open()

        let error = await expectCourierError { try await waiter.value }
        #expect(error?.code == .reauthenticationRequired)
        #expect(try await authenticator.currentCredential() == nil)
        #expect(await store.load() == nil)
    }

    /// With `refreshFails`, the refresh of the old session fails with a dead grant after the sign-in: its waiters
    /// used to get that error although a signed-in session was there.
    @Test(
        "a sign-in during a refresh wins: waiters get the signed-in credential, whether the refresh succeeds or fails",
        arguments: [false, true])
    func signInDuringRefresh(refreshFails: Bool) async throws {
        let gate = F.Gate()
        let store = InMemoryCredentialStore()
        let refresher = F.ScriptedRefresher(gate: gate) { _, call in
            guard !refreshFails else {
                throw CourierError(code: .reauthenticationRequired, stage: .decide, message: "invalid_grant")
            }
            return Credential(accessToken: "access-\(call + 1)", refreshToken: "refresh-\(call + 1)")
        }
        let authenticator = Authenticator(store: store, refresher: refresher, now: { F.start })
        try await authenticator.signIn(F.signedIn())

        let waiter = Task { try await authenticator.refresh(rejected: 1) }
        await gate.waitForArrivals(1)
        let other = try await authenticator.signIn(Credential(accessToken: "other-user", refreshToken: "other"))
        await gate.open()

        #expect(try await waiter.value == other)
        #expect(try await authenticator.currentCredential() == other)
        #expect(await store.load() == other)
    }

    /// A refresh of the old session held at the gate with a waiter, a sign-in, and a refresh of the new session
    /// (its credential rejected too) held with a waiter of its own.
    private func refreshesOfTwoSessions() async throws -> (
        gate: F.Gate, signedIn: Credential, oldWaiter: Task<Credential, any Error>,
        newWaiter: Task<Credential, any Error>
    ) {
        let gate = F.Gate()
        let authenticator = Authenticator(refresher: F.ScriptedRefresher(gate: gate), now: { F.start })
        try await authenticator.signIn(F.signedIn())
        let oldWaiter = Task { try await authenticator.refresh(rejected: 1) }
        await gate.waitForArrivals(1)
        let other = try await authenticator.signIn(Credential(accessToken: "other-user", refreshToken: "other"))
        let newWaiter = Task { try await authenticator.refresh(rejected: other.version) }
        await gate.waitForArrivals(2)
        return (gate, other, oldWaiter, newWaiter)
    }

    @Test("a refresh of a newer session, started while the old one's is out, does not orphan the old one's waiters")
    func refreshOfANewSessionKeepsTheOldWaiters() async throws {
        let (gate, other, oldWaiter, newWaiter) = try await refreshesOfTwoSessions()
        await gate.open()

        // The new session's refresh wins; the old one's waiter gets the session's credential when its refresh ends
        // (it used to stay suspended for ever: the new flight replaced the old one, whose end found no waiters).
        #expect(try await newWaiter.value.version > other.version)
        #expect(try await oldWaiter.value.version >= other.version)
    }

    @Test("a waiter of a superseded refresh can still be cancelled")
    func cancelAWaiterOfASupersededRefresh() async throws {
        let (gate, _, oldWaiter, newWaiter) = try await refreshesOfTwoSessions()
        oldWaiter.cancel()
        await #expect(throws: CancellationError.self) { try await oldWaiter.value }
        await gate.open()
        _ = try await newWaiter.value
    }

    @Test("the credential is loaded lazily from the store, with its version, and events report the session")
    func lazyLoadAndEvents() async throws {
        var stored = F.signedIn()
        stored.version = 7
        let store = InMemoryCredentialStore(stored)
        let authenticator = Authenticator(store: store, refresher: F.ScriptedRefresher(), now: { F.start })

        #expect(try await authenticator.currentCredential() == stored)
        let renewed = try await authenticator.refresh(rejected: 7)
        try await authenticator.signOut()

        #expect(renewed.version == 8)
        #expect(await store.load() == nil)
        var events: [AuthenticationEvent] = []
        for await event in authenticator.events {
            events.append(event)
            if events.count == 2 { break }
        }
        #expect(events == [.refreshed(version: 8), .sessionEnded(.signedOut)])
    }

    // MARK: - Cancellation of the calls in flight

    /// `cancelAll()` while the token request is on its way: the calls in flight end, but the refresh, which runs for
    /// every waiter, goes on. Its response (here the only copy of the rotated refresh token) is kept, and the next call
    /// uses the new token without another token request.
    @Test("cancelAll() during a token refresh cancels the calls but not the refresh: the rotated token is kept")
    func cancelAllLeavesTheRefresh() async throws {
        let harness = try await F.harness()
        let gate = F.Gate()
        harness.mock.stub(.post, F.tokenPath) { _ in
            await gate.pass()
            return .json(raw: #"{"access_token":"access-2","token_type":"bearer","refresh_token":"refresh-2"}"#)
        }
        F.stubAPI(harness.mock, accepting: { "access-2" })

        let first = Task { try await harness.client.send(Probe()) }
        await gate.waitForArrivals(1)
        #expect(harness.client.cancelAll() >= 1)
        await #expect(throws: CancellationError.self) { _ = try await first.value }
        await gate.open()

        // Joins the refresh still in flight (or finds its result): no second token request.
        #expect(try await harness.client.send(Probe()) == "ok")
        #expect(harness.tokenRequests.count == 1)
        #expect(try await harness.authenticator.currentCredential()?.refreshToken == "refresh-2")
    }

    /// A refresher that asks its token endpoint with `exchange(for:)` or `transfer(_:)` instead of `send(_:)`.
    struct ExchangeRefresher: TokenRefresher {
        let client: Client
        let viaTransfer: Bool

        func refresh(_ credential: Credential) async throws -> Credential {
            let request = Probe<String>(method: .post, path: "/token")
            let token =
                viaTransfer
                ? try await client.transfer(request).value : try await client.exchange(for: request).value
            return Credential(accessToken: token, refreshToken: credential.refreshToken, expiresAt: nil)
        }
    }

    @Test(
        "a refresher's exchange(for:) and transfer(_:) stay out of cancelAll(), as its send(_:) does",
        arguments: [false, true])
    func refresherExchangeIsExempt(viaTransfer: Bool) async throws {
        let (client, mock) = Fixtures.client()
        let gate = JobFixtures.Gate()
        var arrivals = gate.arrivals.makeAsyncIterator()
        mock.stub(.post, "/token") { _ in
            guard await gate.enter("token") else { throw CancellationError() }
            return .text("access-2")
        }
        let authenticator = Authenticator(
            refresher: ExchangeRefresher(client: client, viaTransfer: viaTransfer), now: { F.start })
        try await authenticator.signIn(F.signedIn())
        let refresh = Task { try await authenticator.refresh(rejected: 1) }
        #expect(await JobFixtures.waitFor(1, on: &arrivals) == ["token"])
        #expect(client.cancelAll() == 0)
        gate.release("token")
        #expect(try await refresh.value.accessToken == "access-2")
    }

    // MARK: - Row 33: failures of the token endpoint

    /// A dead grant ends the session as a sign-out does: the ended user's private responses leave the HTTP cache
    /// (a server-side "sign out everywhere"), and a relaunch, which finds the store empty, would not purge them.
    @Test("a dead grant (invalid_grant) purges the ended session's entries from the HTTP cache")
    func deadGrantPurgesTheCache() async throws {
        let cache = HTTPCache.memory()
        let deferred = F.DeferredRefresher()
        let authenticator = Authenticator(refresher: deferred, now: { F.start })
        let (client, mock) = Fixtures.client { configuration in
            configuration.cache = cache
            configuration.authenticate(with: authenticator)
        }
        deferred.set(OAuth2RefreshTokenRefresher(client: client, path: F.tokenPath, clientID: "app", now: { F.start }))
        try await authenticator.signIn(F.signedIn())
        mock.stub(.post, F.tokenPath, with: .json(raw: #"{"error":"invalid_grant"}"#, status: 400))
        mock.stub(.get, "/page", with: .text("private page", headerFields: [.cacheControl: "private, max-age=600"]))
        _ = try await client.send(Probe(path: "/page"))
        #expect(cache.count == 1)

        let error = await expectCourierError { try await authenticator.refresh(rejected: 1) }

        #expect(error?.code == .reauthenticationRequired)
        #expect(cache.count == 0, "the ended session's entry is gone")
    }

    /// A client whose own decisions turn every error status into its API's error: the token endpoint's answers
    /// still reach the token parser, so `invalid_grant` ends the session and `invalid_client` says so.
    @Test(
        "the client's own decisions do not see the token endpoint's answer",
        arguments: [
            ("invalid_grant", CourierError.Code.reauthenticationRequired),
            ("invalid_client", .clientAuthenticationFailed),
        ])
    func clientDecisionsSkipTheTokenResponse(tokenError: String, code: CourierError.Code) async throws {
        let deferred = F.DeferredRefresher()
        let authenticator = Authenticator(refresher: deferred, now: { F.start })
        let (client, mock) = Fixtures.client { configuration in
            configuration.decisions.append(.validateStatus())
            configuration.authenticate(with: authenticator)
        }
        deferred.set(OAuth2RefreshTokenRefresher(client: client, path: F.tokenPath, clientID: "app", now: { F.start }))
        try await authenticator.signIn(F.signedIn())
        mock.stub(.post, F.tokenPath, with: .json(raw: #"{"error":"\#(tokenError)"}"#, status: 400))
        F.stubAPI(mock, accepting: { "never" })

        let error = await expectCourierError { try await client.send(Probe()) }

        #expect(error?.code == code)
        if code == .reauthenticationRequired {
            // A dead grant ends the session: its credential is gone.
            let ended = await expectCourierError { try await authenticator.currentCredential() }
            #expect(ended?.code == .reauthenticationRequired)
        }
    }

    @Test(
        "an error where a token should be (a 200): a dead grant ends the session, another keeps the server's error",
        arguments: [
            ("bad_refresh_token", CourierError.Code.reauthenticationRequired),
            ("invalid_grant", .reauthenticationRequired),
            ("slow_down_please", .decodingFailed),
        ])
    func tokenErrorInASuccess(tokenError: String, code: CourierError.Code) async throws {
        let deferred = F.DeferredRefresher()
        let authenticator = Authenticator(refresher: deferred, now: { F.start })
        let (client, mock) = Fixtures.client { $0.authenticate(with: authenticator) }
        deferred.set(OAuth2RefreshTokenRefresher(client: client, path: F.tokenPath, clientID: "app", now: { F.start }))
        try await authenticator.signIn(F.signedIn())
        // GitHub answers an expired or revoked refresh token so: 200 with an error body.
        mock.stub(.post, F.tokenPath, with: .json(raw: #"{"error":"\#(tokenError)"}"#, status: 200))
        F.stubAPI(mock, accepting: { "never" })

        let error = await expectCourierError { try await client.send(Probe()) }
        let cause = error.flatMap { $0.underlyingError as? CourierError } ?? error
        #expect(error?.code == code || cause?.code == code, "\(String(describing: error))")
        // Before: "not a valid OAuth 2.0 token response", with no trace of the server's error; a dead grant kept
        // the session alive, each call spending a token request until the storm guard stopped them.
        #expect("\(String(describing: error))".contains(tokenError), "\(String(describing: error))")
    }

    @Test("row 33: invalid_grant fails every waiter with reauthenticationRequired, ends the session, no loop")
    func invalidGrantEndsTheSession() async throws {
        let store = InMemoryCredentialStore()
        let harness = try await F.harness(store: store)
        harness.mock.stub(.post, F.tokenPath) { _ in .json(raw: #"{"error":"invalid_grant"}"#, status: 400) }
        let barrier = F.Barrier(count: 5)
        F.stubAPI(harness.mock, accepting: { "never" }, beforeRejecting: { await barrier.arrive() })

        let codes = await withTaskGroup(of: CourierError.Code?.self) { group in
            for _ in 0..<5 {
                group.addTask { (await expectCourierError { try await harness.client.send(Probe()) })?.code }
            }
            return await group.reduce(into: [CourierError.Code?]()) { $0.append($1) }
        }

        #expect(codes == Array(repeating: .reauthenticationRequired, count: 5))
        #expect(harness.tokenRequests.count == 1)
        #expect(harness.apiRequests.count == 5)
        #expect(await store.load() == nil)

        // Later requests fail fast: neither the token endpoint nor the API is asked again.
        let later = await expectCourierError { try await harness.client.send(Probe()) }
        #expect(later?.code == .reauthenticationRequired)
        #expect(later?.stage == .adapt)
        #expect(harness.tokenRequests.count == 1)
        #expect(harness.apiRequests.count == 5)

        var events: [AuthenticationEvent] = []
        for await event in harness.authenticator.events {
            events.append(event)
            if event == .sessionEnded(.reauthenticationRequired) { break }
        }
        #expect(events == [.signedIn(version: 1), .sessionEnded(.reauthenticationRequired)])

        // Signing in again restores service.
        try await harness.authenticator.signIn(Credential(accessToken: "never", refreshToken: "r"))
        #expect(try await harness.client.send(Probe()) == "ok")
    }

    @Test(
        "row 33: a 5xx, a timeout or a lost connection is transient: the waiter gets it, the credential is kept",
        arguments: [
            (MockResponse.text("maintenance", status: 503), CourierError.Code.unacceptableStatus),
            (
                MockResponse.status(
                    200,
                    fault: .failBeforeResponse(CourierError(code: .timedOut, stage: .transport, message: "timeout"))
                ), .timedOut
            ),
            (
                MockResponse.status(
                    200,
                    fault: .failBeforeResponse(CourierError(code: .connectionFailed, stage: .transport))
                ), .connectionFailed
            ),
        ]
    )
    func transientFailuresKeepTheCredential(tokenResponse: MockResponse, code: CourierError.Code) async throws {
        let store = InMemoryCredentialStore()
        let harness = try await F.harness(store: store)
        harness.mock.stub(.post, F.tokenPath, with: tokenResponse)
        F.stubAPI(harness.mock, accepting: { "access-2" })

        let error = await expectCourierError { try await harness.client.send(Probe()) }

        #expect(error?.code == code)
        #expect(error?.stage == .decide)
        #expect(error?.response?.status.code == 401)
        #expect(try await harness.authenticator.currentCredential()?.accessToken == "access-1")
        #expect(await store.load()?.refreshToken == "refresh-1")

        // The endpoint recovers: the next rejected request refreshes.
        F.stubTokenEndpoint(harness.mock)
        #expect(try await harness.client.send(Probe()) == "ok")
        #expect(harness.tokenRequests.count == 2)
    }

    @Test("the storm guard forgets refreshes the clock was set back past (it refused every refresh for the step)")
    func stormGuardAfterTheClockIsSetBack() async throws {
        let time = F.TestTime()
        let refresher = F.ScriptedRefresher()
        let authenticator = Authenticator(
            refresher: refresher, refreshLimit: .init(maximumRefreshes: 2, interval: .seconds(30)), now: time.closure)
        try await authenticator.signIn(F.signedIn())
        _ = try await authenticator.refresh(rejected: 1)
        _ = try await authenticator.refresh(rejected: 2)

        time.advance(by: -3600)
        let renewed = try await authenticator.refresh(rejected: 3)

        #expect(renewed.version == 4)
        #expect(refresher.calls.count == 3)
    }

    @Test("row 33: the storm guard refuses the refresh past the limit with excessiveRefresh, until time passes")
    func stormGuard() async throws {
        let harness = try await F.harness(refreshLimit: .init(maximumRefreshes: 2, interval: .seconds(30)))
        F.stubTokenEndpoint(harness.mock)
        harness.mock.stub(nil, "/probe") { _ in F.invalidToken }

        for _ in 0..<2 {
            let error = await expectCourierError { try await harness.client.send(Probe()) }
            #expect(error?.code == .unacceptableStatus)
        }
        let refused = await expectCourierError { try await harness.client.send(Probe()) }
        #expect(refused?.code == .excessiveRefresh)
        #expect(harness.tokenRequests.count == 2)

        harness.time.advance(by: 31)
        let later = await expectCourierError { try await harness.client.send(Probe()) }
        #expect(later?.code == .unacceptableStatus)
        // The guard's refusal left the credential usable (it is not marked rejected): it signs, its 401 renews once
        // (3) for the replay.
        #expect(harness.tokenRequests.count == 3)
    }

    @Test(
        "the storm guard refusing one endpoint's 401s fails those calls, not calls to endpoints that accept the token")
    func stormGuardKeepsTheCredentialUsable() async throws {
        let harness = try await F.harness(refreshLimit: .init(maximumRefreshes: 2, interval: .seconds(30)))
        F.stubTokenEndpoint(harness.mock)
        harness.mock.stub(nil, "/admin") { _ in F.invalidToken }  // 401 whatever the token
        harness.mock.stub(nil, "/probe") { _ in .text("ok") }
        var codes: [CourierError.Code?] = []
        for _ in 0..<3 {
            codes.append(await expectCourierError { try await harness.client.send(Probe(path: "/admin")) }?.code)
        }
        #expect(codes == [.unacceptableStatus, .unacceptableStatus, .excessiveRefresh])
        #expect(try await harness.client.send(Probe()) == "ok")
        #expect(harness.tokenRequests.count == 2)
    }

    @Test("a renewal another process saved that has expired since is renewed before it signs a request")
    func expiredRenewalFromTheStoreIsRenewed() async throws {
        let store = InMemoryCredentialStore()
        let harness = try await F.harness(store: store, signIn: F.signedIn(expiresIn: 30))
        // An app extension renewed access-1 long ago; its renewal has expired since.
        await store.save(
            Credential(
                accessToken: "access-ext", refreshToken: "refresh-ext", expiresAt: F.start.addingTimeInterval(-10)))
        F.stubTokenEndpoint(harness.mock)
        F.stubAPI(harness.mock, accepting: { "access-2" })

        #expect(try await harness.client.send(Probe()) == "ok")
        #expect(harness.apiRequests.map { $0.head.headerFields[.authorization] } == ["Bearer access-2"])
        #expect(harness.tokenRequests.count == 1)
        #expect(harness.tokenRequests.first?.bodyText?.contains("refresh_token=refresh-ext") == true)
    }

    /// A store whose `number`th load waits at `gate`.
    actor GatedStore: CredentialStore {
        var credential: Credential?
        var loads = 0
        let number: Int
        let gate: F.Gate

        init(number: Int, gate: F.Gate) {
            self.number = number
            self.gate = gate
        }

        func load() async throws -> Credential? {
            loads += 1
            let value = credential
            if loads == number { await gate.pass() }
            return value
        }

        func save(_ credential: Credential) { self.credential = credential }
        func clear() { credential = nil }
    }

    @Test("a sign-in while a dead grant's store re-read is out gives the waiters the signed-in credential")
    func signInDuringDeadGrantReRead() async throws {
        let gate = F.Gate()
        // Load 1: the check before the refresh; load 2: the re-read after invalid_grant.
        let store = GatedStore(number: 2, gate: gate)
        let refresher = F.ScriptedRefresher { _, _ in
            throw CourierError(code: .reauthenticationRequired, stage: .decide, message: "invalid_grant")
        }
        let authenticator = Authenticator(store: store, refresher: refresher, now: { F.start })
        try await authenticator.signIn(F.signedIn())

        let waiter = Task { try await authenticator.refresh(rejected: 1) }
        await gate.waitForArrivals(1)
        // The sign-in's save queues behind the gated read, so it is not awaited; its credential is in use at once.
        let signIn = Task {
            try await authenticator.signIn(Credential(accessToken: "other-user", refreshToken: "other"))
        }
        while try await authenticator.currentCredential()?.accessToken != "other-user" { await Task.yield() }
        await gate.open()
        let other = try await signIn.value
        #expect(try await waiter.value == other)
    }

    // MARK: - Proactive refresh

    @Test("a credential expiring in 30 s with a 60 s window is refreshed before the request; no 401 is seen")
    func proactiveRefresh() async throws {
        let harness = try await F.harness(signIn: F.signedIn(expiresIn: 30))
        F.stubTokenEndpoint(harness.mock)
        F.stubAPI(harness.mock, accepting: { "access-2" })

        #expect(try await harness.client.send(Probe()) == "ok")

        #expect(harness.mock.recordedRequests.map(\.pathWithoutQuery) == [F.tokenPath, "/probe"])
        #expect(harness.apiRequests.map { $0.head.headerFields[.authorization] } == ["Bearer access-2"])
        let credential = try await harness.authenticator.currentCredential()
        #expect(credential?.expiresAt == harness.time.now.addingTimeInterval(3600))
    }

    @Test("a proactive refresh that fails transiently falls back to the still-valid credential")
    func proactiveRefreshFallsBack() async throws {
        let harness = try await F.harness(signIn: F.signedIn(expiresIn: 30))
        harness.mock.stub(.post, F.tokenPath, with: .text("down", status: 503))
        F.stubAPI(harness.mock, accepting: { "access-1" })

        #expect(try await harness.client.send(Probe()) == "ok")
        #expect(harness.tokenRequests.count == 1)
    }

    @Test("a provider's 60-second tokens are renewed once per half lifetime, not on every call")
    func shortLivedTokens() async throws {
        let harness = try await F.harness(signIn: F.signedIn(expiresIn: 30))
        let issued = DecisionFixtures.Counter()
        harness.mock.stub(.post, F.tokenPath) { _ in
            let number = issued.next() + 2
            return .json(
                raw: #"{"access_token":"access-\#(number)","token_type":"bearer","expires_in":60,"#
                    + #""refresh_token":"refresh-\#(number)"}"#)
        }
        harness.mock.stub(nil, "/probe") { _ in .text("ok") }

        #expect(try await harness.client.send(Probe()) == "ok")
        #expect(harness.tokenRequests.count == 1, "30 s left, inside the 60 s window: renewed")
        // 25 s in steps of 5: the new token has 55 … 35 s left, more than half of its 60 s.
        for _ in 0..<5 {
            harness.time.advance(by: 5)
            #expect(try await harness.client.send(Probe()) == "ok")
        }
        #expect(harness.tokenRequests.count == 1, "no refresh per call")
        harness.time.advance(by: 10)
        #expect(try await harness.client.send(Probe()) == "ok")
        #expect(harness.tokenRequests.count == 2, "25 s left: past half its lifetime")
    }

    /// A store that holds another account's credential and cannot be written (a full disk, a read-only directory).
    struct UnwritableStore: CredentialStore {
        static let other = Credential(
            accessToken: "other-account", refreshToken: "other-refresh", expiresAt: F.start.addingTimeInterval(3600))
        func load() async throws -> Credential? { Self.other }
        func save(_ credential: Credential) async throws {
            throw CourierError(code: .credentialStoreFailed, stage: .adapt, message: "the disk is full")
        }
        func clear() async throws {}
    }

    /// A store whose next save fails once (a full disk, a Keychain that is locked for a moment).
    actor FlakyStore: CredentialStore {
        private var credential: Credential?
        var failsNextSave = false

        func load() async throws -> Credential? { credential }
        func save(_ credential: Credential) async throws {
            if failsNextSave {
                failsNextSave = false
                throw CourierError(code: .credentialStoreFailed, stage: .adapt, message: "the disk is full")
            }
            self.credential = credential
        }
        func clear() async throws { credential = nil }
        func failNextSave() { failsNextSave = true }
    }

    @Test("a rotated credential the store did not take is saved again at the next call, with no token request")
    func failedRenewalSaveIsRetried() async throws {
        let store = FlakyStore()
        let harness = try await F.harness(store: store)
        await store.failNextSave()
        F.stubTokenEndpoint(harness.mock)
        F.stubAPI(harness.mock, accepting: { "access-2" })

        // Rotated: refresh-1 is spent at the server, and the save of refresh-2 failed. The replay of the rejected
        // call, and any later call, saves it again.
        #expect(try await harness.client.send(Probe()) == "ok")
        #expect(try await harness.client.send(Probe()) == "ok")
        // Before: the store kept refresh-1 until the next refresh, an hour later; an app killed meanwhile started
        // again with a refresh token the server had rotated away, and was signed out.
        #expect(try await store.load()?.refreshToken == "refresh-2")
        #expect(try await harness.authenticator.currentCredential()?.refreshToken == "refresh-2")
        #expect(harness.tokenRequests.count == 1)
    }

    /// A client-credentials acquirer that waits at `gate` before it answers.
    struct GatedAcquirer: TokenAcquirer {
        let gate: JobFixtures.Gate
        func acquire() async throws -> Credential {
            await gate.enter("acquire")
            return Credential(accessToken: "acquired", refreshToken: nil, expiresAt: F.start.addingTimeInterval(3600))
        }
        func refresh(_ credential: Credential) async throws -> Credential { try await acquire() }
    }

    /// A client-credentials acquirer that issues `acquired-N`.
    struct CountingAcquirer: TokenAcquirer {
        let count = DecisionFixtures.Counter()
        func acquire() async throws -> Credential {
            Credential(
                accessToken: "acquired-\(count.next())", refreshToken: nil, expiresAt: F.start.addingTimeInterval(3600))
        }
        func refresh(_ credential: Credential) async throws -> Credential { try await acquire() }
    }

    @Test("client credentials: a store that cannot be read (a corrupt file) is replaced by the next acquisition")
    func corruptStoreIsReplacedByAnAcquisition() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("credential.json")
        try Data("not json".utf8).write(to: file)
        let store = FileCredentialStore(url: file)
        let authenticator = Authenticator(store: store, refresher: CountingAcquirer(), now: { F.start })

        // Before: every call failed with credentialStoreFailed until someone deleted the file.
        #expect(try await authenticator.validCredential()?.accessToken == "acquired-1")
        #expect(try await store.load()?.accessToken == "acquired-1")
        #expect(try await authenticator.validCredential()?.accessToken == "acquired-1")
    }

    @Test("a sign-out while a first credential is being acquired wins: the acquired one is dropped, not stored")
    func signOutDuringAcquisition() async throws {
        let store = InMemoryCredentialStore()
        let gate = JobFixtures.Gate()
        let authenticator = Authenticator(store: store, refresher: GatedAcquirer(gate: gate), now: { F.start })
        let waiting = Task { try await authenticator.validCredential() }
        var arrivals = gate.arrivals.makeAsyncIterator()
        _ = await arrivals.next()  // the acquisition is out
        try await authenticator.signOut()
        gate.release("acquire")
        let outcome = await waiting.result
        // Before: the acquisition saw "signed out" before and after, took it for no change, and stored its token
        // after the sign-out's clear.
        #expect(await store.load() == nil)
        #expect(try await authenticator.currentCredential() == nil)
        #expect(throws: CourierError.self) { try outcome.get() }
    }

    @Test("after a sign-in the store could not save, a refresh does not adopt the store's older credential")
    func failedSignInSaveIsNotARenewal() async throws {
        let harness = try await F.harness(store: UnwritableStore(), signIn: nil)
        let error = await expectCourierError { try await harness.authenticator.signIn(F.signedIn()) }
        #expect(error?.code == .credentialStoreFailed)
        F.stubTokenEndpoint(harness.mock)
        F.stubAPI(harness.mock, accepting: { "access-2" })

        // access-1 is rejected: the refresh asks the token endpoint, not the store, for its successor.
        #expect(try await harness.client.send(Probe()) == "ok")
        #expect(harness.tokenRequests.count == 1)
        let sent = harness.apiRequests.map { $0.head.headerFields[.authorization] }
        #expect(sent == ["Bearer access-1", "Bearer access-2"])
    }

    @Test(
        "two processes on one store: the refresh that loses the race (invalid_grant) adopts the winner's renewal")
    func lostRefreshRaceAdoptsTheWinner() async throws {
        let store = InMemoryCredentialStore()
        let harness = try await F.harness(store: store)
        let winner = Credential(
            accessToken: "access-other", refreshToken: "refresh-other", expiresAt: F.start.addingTimeInterval(3600))
        // The other process spends refresh-1 first and saves its renewal; the server then refuses this one's.
        harness.mock.stub(.post, F.tokenPath) { _ in
            await store.save(winner)
            return .json(raw: #"{"error":"invalid_grant"}"#, status: 400)
        }
        F.stubAPI(harness.mock, accepting: { "access-other" })

        #expect(try await harness.client.send(Probe()) == "ok")
        #expect(harness.tokenRequests.count == 1)
        #expect(await store.load()?.accessToken == "access-other", "the winner's credential stays stored")
        #expect(try await harness.authenticator.currentCredential()?.accessToken == "access-other")
    }

    @Test("a credential without a refresh token: the error says so, not that a server rejected one")
    func noRefreshTokenIsNamed() async throws {
        let expired = Credential(accessToken: "access-1", refreshToken: nil, expiresAt: F.start.addingTimeInterval(-1))
        let harness = try await F.harness(signIn: expired)
        F.stubTokenEndpoint(harness.mock)
        F.stubAPI(harness.mock, accepting: { "access-2" })
        let error = await expectCourierError { try await harness.client.send(Probe()) }
        #expect(error?.code == .reauthenticationRequired)
        #expect(error?.message?.contains("has no refresh token") == true, "\(String(describing: error))")
        #expect(harness.tokenRequests.isEmpty, "nothing was sent")
    }

    @Test("a credential without a refresh token is used until it expires, not ended inside the refresh window")
    func noRefreshTokenIsUsedUntilExpiry() async throws {
        let store = InMemoryCredentialStore()
        let short = Credential(accessToken: "access-1", refreshToken: nil, expiresAt: F.start.addingTimeInterval(30))
        let harness = try await F.harness(store: store, signIn: short)
        F.stubTokenEndpoint(harness.mock)
        F.stubAPI(harness.mock, accepting: { "access-1" })

        #expect(try await harness.client.send(Probe()) == "ok", "30 s left: still good")
        #expect(harness.tokenRequests.isEmpty)
        #expect(await store.load()?.accessToken == "access-1", "the session goes on")
        #expect(try await harness.authenticator.currentCredential()?.accessToken == "access-1")

        harness.time.advance(by: 31)
        let error = await expectCourierError { try await harness.client.send(Probe()) }
        #expect(error?.code == .reauthenticationRequired, "expired, with nothing to renew it")
        #expect(harness.tokenRequests.isEmpty)
    }

    @Test("30 s tokens: another process's renewal in the store is adopted, not renewed again (no ping-pong)")
    func shortLivedRenewalInTheStoreIsAdopted() async throws {
        let time = F.TestTime()
        let store = InMemoryCredentialStore()
        let issuing = { (prefix: String) in
            F.ScriptedRefresher { _, call in
                Credential(
                    accessToken: "\(prefix)-\(call)", refreshToken: "\(prefix)-r\(call)",
                    expiresAt: time.now.addingTimeInterval(30))
            }
        }
        let (refresherA, refresherB) = (issuing("a"), issuing("b"))
        let a = Authenticator(store: store, refresher: refresherA, now: time.closure)
        let b = Authenticator(store: store, refresher: refresherB, now: time.closure)
        try await a.signIn(F.signedIn(expiresIn: 20))

        #expect(try await b.validCredential()?.accessToken == "b-1", "B renews the expiring credential it loaded")
        #expect(try await a.validCredential()?.accessToken == "b-1", "A adopts B's renewal (30 s left)")
        time.advance(by: 5)
        #expect(try await a.validCredential()?.accessToken == "b-1")
        #expect(try await b.validCredential()?.accessToken == "b-1")
        #expect(refresherA.calls.count == 0)
        #expect(refresherB.calls.count == 1)
    }

    @Test("a renewal installed from another instance counts its lifetime from its arrival, not the whole window")
    func installedRenewalUsesItsLifetime() async throws {
        let time = F.TestTime()
        let refresher = F.ScriptedRefresher()
        let authenticator = Authenticator(refresher: refresher, now: time.closure)
        try await authenticator.signIn(F.signedIn())
        let renewal = Credential(
            accessToken: "other-2", refreshToken: "other-r2", expiresAt: time.now.addingTimeInterval(30))
        await authenticator.install(renewal, keepingSignatures: true)

        #expect(try await authenticator.validCredential()?.accessToken == "other-2")
        #expect(refresher.calls.count == 0, "30 s left of a 30 s token is not 'expiring'")
        time.advance(by: 16)
        #expect(try await authenticator.validCredential()?.accessToken == "access-2", "14 s left: renewed")
        #expect(refresher.calls.count == 1)
    }

    @Test("a custom store's credential with version Int.max renews without an overflow trap")
    func hugeVersionFromACustomStore() async throws {
        let store = InMemoryCredentialStore()
        var stored = F.signedIn()
        stored.version = .max
        await store.save(stored)
        let authenticator = Authenticator(store: store, refresher: F.ScriptedRefresher(), now: { F.start })
        let held = try #require(try await authenticator.currentCredential())
        let renewed = try await authenticator.refresh(rejected: held.version)
        #expect(renewed.accessToken == "access-2")
        #expect(renewed.version != held.version)
    }

    @Test("a credential well before expiry is not refreshed")
    func noRefreshBeforeTheWindow() async throws {
        let harness = try await F.harness(signIn: F.signedIn(expiresIn: 61))
        F.stubAPI(harness.mock, accepting: { "access-1" })

        #expect(try await harness.client.send(Probe()) == "ok")
        #expect(harness.tokenRequests.isEmpty)
    }
}
