import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("OAuth2RefreshTokenRefresher", .timeLimit(.minutes(1)))
struct OAuth2RefreshTokenRefresherTests {
    typealias F = AuthFixtures

    private static func refresher(
        secret: String? = nil
    ) -> (OAuth2RefreshTokenRefresher, MockTransport) {
        let (client, mock) = Fixtures.client()
        let refresher = OAuth2RefreshTokenRefresher(
            client: client,
            path: F.tokenPath,
            clientID: "app",
            clientSecret: secret,
            now: { F.start }
        )
        return (refresher, mock)
    }

    @Test("decodes the token response; a rotated refresh token replaces the old one")
    func rotation() async throws {
        let (refresher, mock) = Self.refresher(secret: "s3cret")
        mock.stub(
            .post, F.tokenPath,
            with: .json(
                raw:
                    #"{"access_token":"access-2","token_type":"Bearer","expires_in":"120","refresh_token":"refresh-2"}"#
            )
        )

        let renewed = try await refresher.refresh(F.signedIn())

        #expect(renewed.accessToken == "access-2")
        #expect(renewed.refreshToken == "refresh-2")
        #expect(renewed.expiresAt == F.start.addingTimeInterval(120))
        #expect(renewed.tokenType == "Bearer")
        let body = try #require(mock.recordedRequests.onlyElement?.bodyText)
        #expect(body == "client_id=app&client_secret=s3cret&grant_type=refresh_token&refresh_token=refresh-1")
    }

    @Test(
        "a token endpoint that redirects to another origin with 307 or 308 gets no refresh token or secret sent there",
        arguments: [307, 308])
    func crossOriginRedirectOfTheTokenRequest(status: Int) async throws {
        let (refresher, mock) = Self.refresher(secret: "s3cret")
        mock.stub(.post, F.tokenPath, with: .status(status, headerFields: [.location: "https://other.example/t"]))
        mock.stub(.post, "/t", with: .json(raw: #"{"access_token":"stolen","token_type":"Bearer"}"#))

        let error = await #expect(throws: CourierError.self) { try await refresher.refresh(F.signedIn()) }

        #expect(error?.code == .insecureRedirect)
        #expect(mock.recordedRequests.count == 1)
        #expect(!mock.recordedRequests.contains { $0.head.authority == "other.example" })
    }

    @Test("once a 303 dropped the body, a later 307 to another origin is followed: no credential is left to send")
    func crossOriginRedirectAfterTheBodyIsGone() async throws {
        let (refresher, mock) = Self.refresher(secret: "s3cret")
        mock.stub(.post, F.tokenPath, with: .status(303, headerFields: [.location: "https://b.example/t"]))
        mock.stub(.get, "/t", with: .status(307, headerFields: [.location: "https://c.example/u"]))
        mock.stub(.get, "/u", with: .json(raw: #"{"access_token":"access-2","token_type":"Bearer"}"#))

        #expect(try await refresher.refresh(F.signedIn()).accessToken == "access-2")
        #expect(mock.recordedRequests.map(\.head.authority).suffix(2) == ["b.example", "c.example"])
        #expect(mock.recordedRequests.dropFirst().map(\.bodyText) == [nil, nil])
    }

    @Test("a token endpoint that redirects on its own origin is followed")
    func sameOriginRedirectOfTheTokenRequest() async throws {
        let (refresher, mock) = Self.refresher()
        mock.stub(.post, F.tokenPath, with: .status(308, headerFields: [.location: "/oauth/token2"]))
        mock.stub(.post, "/oauth/token2", with: .json(raw: #"{"access_token":"access-2","token_type":"Bearer"}"#))

        #expect(try await refresher.refresh(F.signedIn()).accessToken == "access-2")
        #expect(mock.recordedRequests.last?.bodyText?.contains("refresh_token=refresh-1") == true)
    }

    @Test("without a new refresh token, the old one is kept")
    func keepsRefreshToken() async throws {
        let (refresher, mock) = Self.refresher()
        mock.stub(.post, F.tokenPath, with: .json(raw: #"{"access_token":"access-2","token_type":"bearer"}"#))

        let renewed = try await refresher.refresh(F.signedIn())

        #expect(renewed.refreshToken == "refresh-1")
        #expect(renewed.expiresAt == nil)
    }

    @Test(
        "an expires_in that is not a positive, finite number of seconds is no expiry",
        arguments: ["0", "-1", #""0""#, #""inf""#, #""nan""#, "-1e9", #""soon""#])
    func unusableLifetime(expiresIn: String) async throws {
        let (refresher, mock) = Self.refresher()
        mock.stub(
            .post, F.tokenPath,
            with: .json(raw: #"{"access_token":"access-2","token_type":"Bearer","expires_in":\#(expiresIn)}"#))

        let renewed = try await refresher.refresh(F.signedIn())

        #expect(renewed.accessToken == "access-2")
        #expect(renewed.expiresAt == nil)
        #expect(!renewed.expires(within: .seconds(60), of: F.start.addingTimeInterval(86_400)))
        _ = try JSONEncoder().encode(renewed)  // what a store writes
    }

    @Test(
        "a 200 that carries a §5.2 error instead of a token is classified like the same error on a 400",
        arguments: [
            ("invalid_grant", CourierError.Code.reauthenticationRequired),
            ("invalid_client", .clientAuthenticationFailed),
            ("something_else", .decodingFailed),
        ])
    func errorInSuccess(tokenError: String, code: CourierError.Code) async throws {
        let (refresher, mock) = Self.refresher()
        mock.stub(.post, F.tokenPath, with: .json(raw: #"{"error":"\#(tokenError)"}"#))

        let error = await expectCourierError { try await refresher.refresh(F.signedIn()) }

        #expect(error?.code == code)
        #expect(mock.recordedRequests.count == 1)
    }

    @Test(
        "a token error that echoes the refresh token or the client secret does not carry them into the error",
        arguments: [false, true])
    func echoedSecrets(basic: Bool) async throws {
        var (refresher, mock) = Self.refresher(secret: "s3cret")
        if basic {
            let client: Client
            (client, mock) = Fixtures.client()
            refresher = OAuth2RefreshTokenRefresher(
                client: client, path: F.tokenPath,
                authentication: .clientSecretBasic(clientID: "app", clientSecret: "s3cret"), now: { F.start })
        }
        mock.stub(
            .post, F.tokenPath,
            with: .json(
                raw:
                    #"{"error":"invalid_grant","error_description":"Invalid refresh token: refresh-1 (client s3cret)","#
                    + #""error_uri":"https://id.example/e?token=refresh-1"}"#,
                status: 400))

        let error = try #require(await expectCourierError { try await refresher.refresh(F.signedIn()) })

        let oauth = try #require(error.underlyingError as? OAuth2TokenError)
        #expect(oauth.errorDescription == "Invalid refresh token: <redacted> (client <redacted>)")
        var dumped = ""
        dump(error, to: &dumped)
        for text in ["\(error)", String(reflecting: error), oauth.description, oauth.errorURI ?? "", dumped] {
            #expect(!text.contains("refresh-1"))
            #expect(!text.contains("s3cret"))
        }
    }

    @Test(
        "RFC 6749 §5.2: only invalid_grant ends the session; a rejected client or scope is a configuration error",
        arguments: [
            (400, "invalid_grant", CourierError.Code.reauthenticationRequired),
            (401, "invalid_client", .clientAuthenticationFailed),
            (400, "invalid_client", .clientAuthenticationFailed),
            (400, "unauthorized_client", .clientAuthenticationFailed),
            (400, "unsupported_grant_type", .clientAuthenticationFailed),
            (400, "invalid_request", .clientAuthenticationFailed),
            (400, "invalid_scope", .scopeRejected),
            (400, "something_else", .unacceptableStatus),
            (500, "invalid_grant", .unacceptableStatus),
            (503, "invalid_client", .unacceptableStatus),
        ]
    )
    func classification(status: Int, tokenError: String, code: CourierError.Code) async throws {
        let (refresher, mock) = Self.refresher()
        mock.stub(.post, F.tokenPath, with: .json(raw: #"{"error":"\#(tokenError)"}"#, status: status))

        let error = await expectCourierError { try await refresher.refresh(F.signedIn()) }

        #expect(error?.code == code)
        let oauth = error?.underlyingError as? OAuth2TokenError
        #expect(oauth?.error == tokenError)
        #expect(oauth?.status == status)
    }

    @Test("the token error's description is kept as printable ASCII only, cut to 200 characters")
    func errorDescription() async throws {
        let (refresher, mock) = Self.refresher()
        let long = String(repeating: "x", count: 300)
        mock.stub(
            .post, F.tokenPath,
            with: .json(
                raw: #"{"error":"invalid_client","error_description":"bad\u0000 s\u00e9cret\n\#(long)"}"#,
                status: 401))

        let error = await expectCourierError { try await refresher.refresh(F.signedIn()) }

        let oauth = try #require(error?.underlyingError as? OAuth2TokenError)
        let description = try #require(oauth.errorDescription)
        #expect(description.hasPrefix("bad scret"))
        #expect(description.count == 200)
        #expect(description.unicodeScalars.allSatisfy { (0x20...0x7E).contains($0.value) })
    }

    @Test("a credential without a refresh token cannot be renewed and sends nothing")
    func noRefreshToken() async throws {
        let (refresher, mock) = Self.refresher()

        let error = await expectCourierError { try await refresher.refresh(Credential(accessToken: "access-1")) }

        #expect(error?.code == .reauthenticationRequired)
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test("a malformed token response fails without quoting the body")
    func malformedResponse() async throws {
        let (refresher, mock) = Self.refresher()
        mock.stub(.post, F.tokenPath, with: .text(#"access_token=access-2&refresh_token=refresh-2"#))

        let error = await expectCourierError { try await refresher.refresh(F.signedIn()) }

        #expect(error?.code == .decodingFailed)
        let description = try #require(error?.description)
        #expect(!F.secrets.contains { description.contains($0) })
        #expect(!F.secrets.contains { error?.bodyExcerpt?.contains($0) ?? false })
    }
}
