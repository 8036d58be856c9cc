import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("OAuth 2.0 client authentication (RFC 6749 §2.3)", .timeLimit(.minutes(1)))
struct OAuth2ClientAuthenticationTests {
    typealias F = AuthFixtures

    /// Sends one refresh with `authentication` and returns what the token endpoint received.
    private static func tokenRequest(
        _ authentication: OAuth2ClientAuthentication
    ) async throws -> MockTransport.RecordedRequest {
        let (client, mock) = Fixtures.client()
        mock.stub(.post, F.tokenPath, with: .json(raw: #"{"access_token":"access-2","token_type":"Bearer"}"#))
        let refresher = OAuth2RefreshTokenRefresher(
            client: client, path: F.tokenPath, authentication: authentication, now: { F.start })
        _ = try await refresher.refresh(F.signedIn())
        return try #require(mock.recordedRequests.onlyElement)
    }

    /// The form fields of a recorded form body.
    private static func fields(_ request: MockTransport.RecordedRequest) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in (request.bodyText ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            fields[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return fields
    }

    @Test("client_secret_basic: id and secret form-encoded, then Base64; nothing about the client in the body")
    func basic() async throws {
        let request = try await Self.tokenRequest(.clientSecretBasic(clientID: "svc:one", clientSecret: "s3:cr+t/ %é"))

        let authorization = try #require(request.head.headerFields[.authorization])
        #expect(authorization.hasPrefix("Basic "))
        let decoded = try #require(Data(base64Encoded: String(authorization.dropFirst("Basic ".count))))
        // §2.3.1: `:` inside the id, `+`, `/`, `%`, the space (as %20, which percent- and form-decoders both read)
        // and `é` are all encoded before the `:` join.
        #expect(String(decoding: decoded, as: UTF8.self) == "svc%3Aone:s3%3Acr%2Bt%2F%20%25%C3%A9")
        let body = Self.fields(request)
        #expect(body == ["grant_type": "refresh_token", "refresh_token": "refresh-1"])
    }

    @Test("client_secret_post: client_id and client_secret in the body, no Authorization header")
    func post() async throws {
        let request = try await Self.tokenRequest(.clientSecretPost(clientID: "web app", clientSecret: "a&b=c+d"))

        #expect(request.head.headerFields[.authorization] == nil)
        #expect(
            Self.fields(request) == [
                "grant_type": "refresh_token", "refresh_token": "refresh-1", "client_id": "web app",
                "client_secret": "a&b=c+d",
            ])
    }

    @Test("none: a public client sends only its client_id")
    func none() async throws {
        let request = try await Self.tokenRequest(.none(clientID: "ios"))

        #expect(request.head.headerFields[.authorization] == nil)
        #expect(
            Self.fields(request) == ["grant_type": "refresh_token", "refresh_token": "refresh-1", "client_id": "ios"])
    }

    @Test("the description names the method and the client, never the secret")
    func description() {
        let authentication = OAuth2ClientAuthentication.clientSecretBasic(clientID: "svc", clientSecret: "hunter2")
        #expect("\(authentication)" == "client_secret_basic(svc)")
        #expect(authentication.methodName == "client_secret_basic")
    }

    @Test("a rejected client keeps the session: no sign-out, the credential stays in memory and in the store")
    func misconfiguredClientKeepsSession() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.post, F.tokenPath, with: .json(raw: #"{"error":"invalid_client"}"#, status: 401))
        let store = InMemoryCredentialStore()
        let authenticator = Authenticator(
            store: store,
            refresher: OAuth2RefreshTokenRefresher(
                client: client, path: F.tokenPath,
                authentication: .clientSecretBasic(clientID: "svc", clientSecret: "wrong"), now: { F.start }),
            now: { F.start }
        )
        let signedIn = try await authenticator.signIn(F.signedIn())

        let error = await expectCourierError { try await authenticator.refresh(rejected: signedIn.version) }

        #expect(error?.code == .clientAuthenticationFailed)
        #expect(try await authenticator.currentCredential()?.accessToken == "access-1")
        #expect(await store.load()?.refreshToken == "refresh-1")
        // Signing out now shows every event so far: a sign-out from the rejection would show up before it.
        try await authenticator.signOut()
        var events: [AuthenticationEvent] = []
        for await event in authenticator.events {
            events.append(event)
            if event == .sessionEnded(.signedOut) { break }
        }
        #expect(events == [.signedIn(version: 1), .sessionEnded(.signedOut)])
    }
}
