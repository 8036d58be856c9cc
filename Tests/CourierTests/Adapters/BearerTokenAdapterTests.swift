import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("BearerTokenAdapter", .timeLimit(.minutes(1)))
struct BearerTokenAdapterTests {
    static let staging = Server(baseURL: URL(string: "https://staging.example.com:8443/v1")!, environment: .staging)

    private func adapt(
        _ adapter: BearerTokenAdapter,
        scheme: String = "https",
        authority: String = "api.example.com",
        headers: HTTPFields = [:],
        context: AdapterContext = AdapterFixtures.context()
    ) async throws -> OutgoingRequest {
        try await adapter.adapt(
            AdapterFixtures.outgoing(scheme: scheme, authority: authority, headers: headers), context: context)
    }

    // MARK: Which origins get the token

    @Test("attaches Authorization: Bearer for the server's origin")
    func attachesForServer() async throws {
        let adapted = try await adapt(.bearer { "tok-1" })
        #expect(adapted.head.headerFields.values(named: "Authorization") == ["Bearer tok-1"])
    }

    @Test("replaces an Authorization the request already had, leaving exactly one")
    func replacesExisting() async throws {
        let adapted = try await adapt(.bearer { "new" }, headers: [.authorization: "Bearer old"])
        #expect(adapted.head.headerFields.values(named: "Authorization") == ["Bearer new"])
    }

    @Test("attaches for any of the client's known servers")
    func attachesForKnownServers() async throws {
        let context = AdapterFixtures.context(knownServers: [AdapterFixtures.server, Self.staging])
        let adapted = try await adapt(.bearer { "tok" }, authority: "staging.example.com:8443", context: context)
        #expect(adapted.head.headerFields[.authorization] == "Bearer tok")
    }

    /// Same host as the server (`https://api.example.com`) but another origin, or another host altogether.
    static let foreignOrigins: [(scheme: String, authority: String)] = [
        ("https", "evil.example.com"),
        ("https", "api.example.com.evil.com"),
        ("https", "example.com"),
        ("https", "api.example.com:8443"),
        ("http", "api.example.com"),
        ("http", "api.example.com:443"),
        ("https", "staging.example.com:8443"),
    ]

    @Test("another origin gets nothing", arguments: foreignOrigins)
    func foreignOriginGetsNothing(scheme: String, authority: String) async throws {
        let calls = CallCounter()
        let adapter = BearerTokenAdapter {
            await calls.increment()
            return "tok"
        }
        let adapted = try await adapt(adapter, scheme: scheme, authority: authority)
        #expect(adapted.head.headerFields[.authorization] == nil)
        #expect(await calls.count == 0)
    }

    /// Spellings of `https://api.example.com` that are the same origin once canonicalised.
    static let sameOriginSpellings = [
        "API.Example.COM", "api.example.com.", "API.EXAMPLE.COM.", "api.example.com:443", "Api.Example.Com.:443",
    ]

    @Test(
        "uppercase, trailing-dot and default-port spellings of the host are the same origin",
        arguments: sameOriginSpellings)
    func sameOriginSpellingsGetToken(authority: String) async throws {
        let adapted = try await adapt(.bearer { "tok" }, authority: authority)
        #expect(adapted.head.headerFields[.authorization] == "Bearer tok")
    }

    @Test("a server configured with uppercase, a trailing dot and :443 still matches the plain host")
    func canonicalServer() async throws {
        let server = Server(baseURL: URL(string: "HTTPS://API.Example.com.:443/v2")!)
        let adapted = try await adapt(.bearer { "tok" }, context: AdapterFixtures.context(server: server))
        #expect(adapted.head.headerFields[.authorization] == "Bearer tok")
    }

    @Test("origins: replaces the default set")
    func explicitOrigins() async throws {
        let files = Origin(scheme: "HTTPS", host: "Files.Example.com.", port: 443)
        #expect(files == Origin(scheme: "https", host: "files.example.com"))
        let adapter = BearerTokenAdapter(origins: [files]) { "tok" }
        #expect(adapter.origins == [files])

        let toFiles = try await adapt(adapter, authority: "files.example.com")
        #expect(toFiles.head.headerFields[.authorization] == "Bearer tok")
        let toServer = try await adapt(adapter, authority: "api.example.com")
        #expect(toServer.head.headerFields[.authorization] == nil)
    }

    @Test("an IPv6 literal origin matches with or without brackets")
    func ipv6Origin() async throws {
        let adapter = BearerTokenAdapter(origins: [Origin(scheme: "https", host: "[::1]", port: 8443)]) { "tok" }
        let adapted = try await adapt(adapter, authority: "[::1]:8443")
        #expect(adapted.head.headerFields[.authorization] == "Bearer tok")
        let otherPort = try await adapt(adapter, authority: "[::1]:9443")
        #expect(otherPort.head.headerFields[.authorization] == nil)
    }

    // MARK: Authentication requirement

    @Test(".none skips the adapter without asking for a token")
    func noneSkips() async throws {
        let calls = CallCounter()
        let adapter = BearerTokenAdapter {
            await calls.increment()
            return "tok"
        }
        let adapted = try await adapt(adapter, context: AdapterFixtures.context(authentication: .none))
        #expect(adapted.head.headerFields[.authorization] == nil)
        #expect(await calls.count == 0)
    }

    @Test(".optional without a token sends the request without Authorization", arguments: [nil, ""] as [String?])
    func optionalWithoutToken(token: String?) async throws {
        let adapted = try await adapt(.bearer { token })
        #expect(adapted.head.headerFields[.authorization] == nil)
    }

    @Test(".required without a token is missingCredential", arguments: [nil, ""] as [String?])
    func requiredWithoutToken(token: String?) async throws {
        let error = await expectCourierError {
            try await adapt(.bearer { token }, context: AdapterFixtures.context(authentication: .required))
        }
        #expect(error?.code == .missingCredential)
        #expect(error?.stage == .adapt)
    }

    @Test(".required to a foreign origin is missingCredential, and the token is never fetched")
    func requiredForeignOrigin() async throws {
        let calls = CallCounter()
        let adapter = BearerTokenAdapter {
            await calls.increment()
            return "tok"
        }
        let error = await expectCourierError {
            try await adapt(
                adapter, authority: "evil.example.com", context: AdapterFixtures.context(authentication: .required))
        }
        #expect(error?.code == .missingCredential)
        #expect(await calls.count == 0)
    }

    // MARK: Bad tokens and failing providers

    @Test(
        "a token with CR, LF or another control character is invalidHeader and not echoed",
        arguments: ["s3cr3t\r\nX-Injected: 1", "s3cr3t\n", "s3cr3t\r", "s3cr3t\0", "s3cr3t\u{7F}"])
    func tokenWithControlCharacters(token: String) async throws {
        let error = await expectCourierError { try await adapt(.bearer { token }) }
        #expect(error?.code == .invalidHeader)
        #expect(error.map { !$0.description.contains("s3cr3t") } == true)
    }

    @Test("a provider's error propagates unchanged")
    func providerErrorDirectly() async throws {
        await #expect(throws: TestFailure(reason: "keychain locked")) {
            try await adapt(.bearer { throw TestFailure(reason: "keychain locked") })
        }
    }

    @Test("name and static-member lookup")
    func nameAndLookup() {
        let adapter: any RequestAdapter = .bearer(origins: [Origin(scheme: "https", host: "a.test")]) { nil }
        #expect(adapter.name == "bearer")
        #expect((adapter as? BearerTokenAdapter)?.origins == [Origin(scheme: "https", host: "a.test")])
    }

    // MARK: Through a client

    private func bearerClient(
        token: @escaping BearerTokenAdapter.TokenProvider = { "tok" }
    ) -> (Client, MockTransport) {
        let mock = MockTransport()
        for _ in 0..<4 { mock.enqueue(.text("ok")) }
        let configuration = Client.Configuration(adapters: [.bearer(token: token)])
        let client = Client(
            servers: [AdapterFixtures.server, Self.staging],
            environment: .production,
            transport: mock,
            configuration: configuration
        )
        return (client, mock)
    }

    @Test("through a client, the token goes to the current server and to another configured environment")
    func throughClientConfiguredServers() async throws {
        let (client, mock) = bearerClient()
        _ = try await client.send(AdapterFixtures.probe())
        var staging = AdapterFixtures.probe()
        staging.environment = .staging
        _ = try await client.send(staging)
        let sent = mock.recordedRequests
        try #require(sent.count == 2)
        #expect(sent[0].head.authority == "api.example.com")
        #expect(sent[0].head.headerFields.values(named: "Authorization") == ["Bearer tok"])
        #expect(sent[1].head.authority == "staging.example.com:8443")
        #expect(sent[1].head.headerFields.values(named: "Authorization") == ["Bearer tok"])
    }

    @Test("through a client, an adapter that retargets the request to a foreign origin leaves it without a token")
    func throughClientRetargeted() async throws {
        let (client, mock) = bearerClient()
        _ = try await client.send(AdapterFixtures.probe(adapters: [AdapterFixtures.retarget(authority: "cdn.test")]))
        let sent = try #require(mock.recordedRequests.first)
        #expect(sent.head.authority == "cdn.test")
        #expect(sent.head.headerFields[.authorization] == nil)
    }

    @Test("through a client, a retargeted trailing-dot uppercase spelling of the server still gets the token")
    func throughClientCanonicalHost() async throws {
        let (client, mock) = bearerClient()
        let probe = AdapterFixtures.probe(adapters: [AdapterFixtures.retarget(authority: "API.EXAMPLE.COM.:443")])
        _ = try await client.send(probe)
        #expect(mock.recordedRequests.first?.head.headerFields[.authorization] == "Bearer tok")
    }

    @Test("through a client, a request whose own server is a foreign origin gets no token")
    func throughClientRequestServerOverride() async throws {
        let (client, mock) = bearerClient()
        let cdn = Server(baseURL: URL(string: "https://cdn.example.net/files")!)
        _ = try await client.send(AdapterFixtures.probe(server: cdn))
        let sent = try #require(mock.recordedRequests.first)
        #expect(sent.head.authority == "cdn.example.net")
        #expect(sent.head.headerFields[.authorization] == nil)
    }

    @Test("through a client, authentication .none sends no token")
    func throughClientNone() async throws {
        let (client, mock) = bearerClient()
        _ = try await client.send(AdapterFixtures.probe(authentication: .none))
        let sent = try #require(mock.recordedRequests.first)
        #expect(sent.head.headerFields[.authorization] == nil)
    }

    @Test("through a client, .required with no token fails before sending")
    func throughClientRequiredNoToken() async throws {
        let (client, mock) = bearerClient(token: { nil })
        let error = await expectCourierError { try await client.send(AdapterFixtures.probe(authentication: .required)) }
        #expect(error?.code == .missingCredential)
        #expect(error?.stage == .adapt)
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test("through a client, .required to a foreign origin fails before sending")
    func throughClientRequiredForeign() async throws {
        let (client, mock) = bearerClient()
        let probe = AdapterFixtures.probe(
            authentication: .required, adapters: [AdapterFixtures.retarget(authority: "cdn.test")])
        let error = await expectCourierError { try await client.send(probe) }
        #expect(error?.code == .missingCredential)
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test("through a client, a CR/LF token is invalidHeader, nothing is sent and the token is not in the error")
    func throughClientInjectedToken() async throws {
        let (client, mock) = bearerClient(token: { "s3cr3t\r\nX-Admin: 1" })
        let error = await expectCourierError { try await client.send(AdapterFixtures.probe()) }
        #expect(error?.code == .invalidHeader)
        #expect(error.map { !"\($0)".contains("s3cr3t") } == true)
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test("through a client, a provider error becomes adapterFailed with the error underneath")
    func throughClientProviderError() async throws {
        let (client, mock) = bearerClient(token: { throw TestFailure(reason: "offline") })
        let error = await expectCourierError { try await client.send(AdapterFixtures.probe()) }
        #expect(error?.code == .adapterFailed)
        #expect(error?.stage == .adapt)
        #expect(error?.underlyingError as? TestFailure == TestFailure(reason: "offline"))
        #expect(mock.recordedRequests.isEmpty)
    }
}
