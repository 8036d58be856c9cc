import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// Row 38: the cache is partitioned by credential; sign-in, refresh and sign-out purge; token responses are
/// never stored (row 35).
@Suite("HTTPCache: credential partitions", .timeLimit(.minutes(1)))
struct CachePartitionTests {
    typealias Page = CacheFixtures.Page

    private static let cacheable = CacheFixtures.fields(["Cache-Control": "private, max-age=600"])

    @Test("row 38: user B never gets user A's entry for the same URL")
    func partitionedByAuthorization() async throws {
        let harness = try CacheFixtures.harness()
        harness.mock.stub(
            .get, "/page",
            handler: { request in
                .text("for \(request.head.headerFields[.authorization] ?? "anonymous")", headerFields: Self.cacheable)
            })
        let alice = try await harness.send(Page(headers: ["Authorization": "Bearer token-a"]))
        #expect(alice.value == "for Bearer token-a")
        let bob = try await harness.send(Page(headers: ["Authorization": "Bearer token-b"]))
        #expect(bob.value == "for Bearer token-b" && bob.cacheStatus?.outcome == .miss)
        let anonymous = try await harness.send()
        #expect(anonymous.value == "for anonymous")
        let aliceAgain = try await harness.send(Page(headers: ["Authorization": "Bearer token-a"]))
        #expect(aliceAgain.value == "for Bearer token-a" && aliceAgain.cacheStatus?.outcome == .hit)
        #expect(harness.cache.count == 3)
    }

    @Test("row 38: one fixed Authorization and a per-user cookie: user B never gets user A's entry")
    func partitionedByEveryCredential() async throws {
        let harness = try CacheFixtures.harness()
        harness.mock.stub(
            .get, "/page",
            handler: { request in
                .text("for \(request.head.headerFields[.cookie] ?? "nobody")", headerFields: Self.cacheable)
            }
        )
        func page(_ cookie: String) -> Page {
            Page(headers: ["Authorization": "Basic Z2F0ZTp3YXk=", "Cookie": cookie])
        }
        let alice = try await harness.send(page("session=a"))
        let bob = try await harness.send(page("session=b"))
        #expect(alice.value == "for session=a")
        #expect(bob.value == "for session=b" && bob.cacheStatus?.outcome == .miss)
        let aliceAgain = try await harness.send(page("session=a"))
        #expect(aliceAgain.value == "for session=a" && aliceAgain.cacheStatus?.outcome == .hit)
        // The gateway's credential alone is a partition of its own.
        let gatewayOnly = try await harness.send(Page(headers: ["Authorization": "Basic Z2F0ZTp3YXk="]))
        #expect(gatewayOnly.value == "for nobody" && gatewayOnly.cacheStatus?.outcome == .miss)
        #expect(harness.cache.count == 3)
    }

    @Test("row 38: a credential header named by a word (X-Vault-Token), not listed: user B never gets A's entry")
    func partitionedByAWordMatchedCredential() async throws {
        let harness = try CacheFixtures.harness()
        let vault = HTTPField.Name("X-Vault-Token")!
        harness.mock.stub(
            .get, "/page",
            handler: { request in
                .text("for \(request.head.headerFields[vault] ?? "nobody")", headerFields: Self.cacheable)
            }
        )
        let alice = try await harness.send(Page(headers: ["X-Vault-Token": "hvs.alice"]))
        let bob = try await harness.send(Page(headers: ["X-Vault-Token": "hvs.bob"]))
        #expect(alice.value == "for hvs.alice")
        #expect(bob.value == "for hvs.bob" && bob.cacheStatus?.outcome == .miss)
        let aliceAgain = try await harness.send(Page(headers: ["X-Vault-Token": "hvs.alice"]))
        #expect(aliceAgain.value == "for hvs.alice" && aliceAgain.cacheStatus?.outcome == .hit)
    }

    @Test("row 38: no secret is written to disk in the clear")
    func noSecretOnDisk() async throws {
        let directory = CacheFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let harness = try CacheFixtures.harness(storage: .disk(directory: directory, byteLimit: 1 << 20))
        harness.mock.stub(.get, "/page", with: .text("body", headerFields: Self.cacheable))
        _ = try await harness.send(Page(headers: ["Authorization": "Bearer very-secret-token"]))
        #expect(try CacheFixtures.entryFiles(in: directory).count == 1)
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let bytes = try Data(contentsOf: directory.appendingPathComponent(file))
            #expect(!String(decoding: bytes, as: UTF8.self).contains("very-secret-token"))
            #expect(!file.contains("page"))
        }
    }

    /// What GitHub's API answers: private, and varying on the caller's credentials.
    private static let variesOnCredentials = CacheFixtures.fields([
        "Cache-Control": "private, max-age=600", "Vary": "Accept, Authorization, Cookie",
    ])

    /// A request with a token and a session cookie that a `Vary` names.
    private static func session(_ cookie: String) -> Page {
        Page(headers: [
            "Accept": "text/plain", "Authorization": "Bearer vary-secret-token", "Cookie": "session=\(cookie)",
        ])
    }

    @Test(
        "Vary: Authorization, Cookie: the token and cookie are not written to disk; the same ones hit, another cookie misses",
        arguments: [false, true])
    func varyOnCredentials(onDisk: Bool) async throws {
        try await CacheFixtures.withHarness(onDisk: onDisk) { harness, directory in
            let responses = DecisionFixtures.Counter()
            harness.mock.stub(
                .get, "/page",
                handler: { _ in .text("response \(responses.next())", headerFields: Self.variesOnCredentials) })
            #expect(try await harness.send(Self.session("vary-secret-cookie")).cacheStatus?.outcome == .miss)
            let again = try await harness.send(Self.session("vary-secret-cookie"))
            #expect(again.value == "response 1" && again.cacheStatus?.outcome == .hit)
            if onDisk {
                #expect(try CacheFixtures.entryFiles(in: directory).count == 1)
                for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
                    let bytes = try Data(contentsOf: directory.appendingPathComponent(file))
                    let text = String(decoding: bytes, as: UTF8.self)
                    let leaked = ["vary-secret-token", "vary-secret-cookie"].filter { text.contains($0) }
                    #expect(leaked.isEmpty, "\(file)")
                }
            }
            let other = try await harness.send(Self.session("other"))
            #expect(other.value == "response 2" && other.cacheStatus?.outcome == .miss)
        }
    }

    @Test("Vary: a store of one's own is given digests of the credentials a Vary names, and the other values as sent")
    func varyGivesAStoreDigests() async throws {
        let store = CacheFixtures.OwnStore()
        let cache = HTTPCache(store: store, now: CacheFixtures.Time().closure)
        let (client, mock) = Fixtures.client { $0.cache = cache }
        mock.stub(.get, "/page", handler: { _ in .text("body", headerFields: Self.variesOnCredentials) })
        _ = try await client.send(Self.session("vary-secret-cookie"))
        #expect(try await client.sendWithCacheStatus(Self.session("vary-secret-cookie")).cacheStatus?.outcome == .hit)
        #expect(try await client.sendWithCacheStatus(Self.session("other")).cacheStatus?.outcome == .miss)

        // One entry per session: the cookie is a credential, so each one is a partition of its own.
        #expect(store.entries.count == 2)
        for entry in store.entries {
            #expect(entry.vary["accept"] == "text/plain")
            for name in ["authorization", "cookie"] {
                let value = try #require(entry.vary[name] ?? nil, "\(name)")
                #expect(!value.contains("vary-secret-token") && !value.contains("session="), "\(name): \(value)")
            }
            let bytes = String(decoding: try #require(entry.serialized()), as: UTF8.self)
            #expect(!bytes.contains("vary-secret-token") && !bytes.contains("session="))
        }
    }

    @Test("row 38: with an Authenticator, sign-out purges the user's entries; unsigned entries stay")
    func signOutPurges() async throws {
        let harness = try await authenticated()
        _ = try await harness.client.send(Page())
        _ = try await harness.client.send(Page(path: "/public", authentication: .none))
        #expect(harness.cache.count == 2)
        try await harness.authenticator.signOut()
        #expect(harness.cache.count == 1)
    }

    @Test("row 38: a client's sign-in purges the previous user's entries before the client's first call")
    func signInBeforeFirstCallPurges() async throws {
        // The previous user's entries, as a cache directory keeps them from an earlier launch.
        let harness = try await authenticated()
        _ = try await harness.client.send(Page())
        _ = try await harness.client.send(Page(path: "/public", authentication: .none))
        #expect(harness.cache.count == 2)
        // The next launch: a new authenticator and client on that cache; the login screen signs in before any call.
        let authenticator = Authenticator(refresher: AuthFixtures.DeferredRefresher())
        let (client, _) = Fixtures.client { configuration in
            configuration.cache = harness.cache
            configuration.authenticate(with: authenticator)
        }
        try await authenticator.signIn(Credential(accessToken: "user-b"))
        #expect(harness.cache.count == 1, "user A's entry is gone; the unsigned one stays")
        _ = client
    }

    @Test("row 38: a new sign-in (another user) purges the previous user's entries")
    func signInPurges() async throws {
        let harness = try await authenticated()
        _ = try await harness.client.send(Page())
        #expect(harness.cache.count == 1)
        try await harness.authenticator.signIn(Credential(accessToken: "user-b"))
        #expect(harness.cache.count == 0)
        let bob = try await harness.client.sendWithCacheStatus(Page())
        #expect(bob.value == "Bearer user-b" && bob.cacheStatus?.outcome == .miss)
    }

    @Test(
        "row 38: a credential change by refresh purges the old credential's entries; row 35: the token response is not stored"
    )
    func refreshPurgesAndTokenNotStored() async throws {
        let harness = try await authenticated()
        _ = try await harness.client.send(Page())
        #expect(harness.cache.count == 1)
        _ = try await harness.authenticator.refresh(
            rejected: try #require(try await harness.authenticator.currentCredential()).version)
        #expect(harness.mock.recordedRequests.contains { $0.pathWithoutQuery == AuthFixtures.tokenPath })
        #expect(harness.cache.count == 0)
        _ = try await harness.client.send(Page())
        #expect(harness.cache.count == 1)
    }

    private struct AuthHarness {
        let client: Client
        let mock: MockTransport
        let cache: HTTPCache
        let authenticator: Authenticator
    }

    /// A client with a cache and an authenticator whose token endpoint answers with cacheable headers.
    private func authenticated() async throws -> AuthHarness {
        let cache = HTTPCache.memory()
        let deferred = AuthFixtures.DeferredRefresher()
        let authenticator = Authenticator(refresher: deferred)
        let (client, mock) = Fixtures.client { configuration in
            configuration.cache = cache
            configuration.authenticate(with: authenticator)
        }
        deferred.set(OAuth2RefreshTokenRefresher(client: client, path: AuthFixtures.tokenPath, clientID: "tests"))
        mock.stub(
            .post, AuthFixtures.tokenPath,
            handler: { _ in
                .json(
                    raw: #"{"access_token":"access-2","token_type":"bearer","expires_in":3600}"#,
                    headerFields: Self.cacheable)
            })
        mock.stub(
            .get, "/page",
            handler: { request in
                .text(request.head.headerFields[.authorization] ?? "none", headerFields: Self.cacheable)
            })
        mock.stub(.get, "/public", handler: { _ in .text("public", headerFields: Self.cacheable) })
        try await authenticator.signIn(Credential(accessToken: "user-a", refreshToken: "refresh-a"))
        return AuthHarness(client: client, mock: mock, cache: cache, authenticator: authenticator)
    }
}
