import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("OAuth2ClientCredentialsRefresher (RFC 6749 §4.4)", .timeLimit(.minutes(1)))
struct OAuth2ClientCredentialsRefresherTests {
    typealias F = AuthFixtures

    /// A client authenticated by the client-credentials grant, on a mock whose token endpoint issues `cc-N`
    /// tokens valid for an hour (after `gate`, when given) and whose API accepts only the newest.
    struct Harness {
        let client: Client
        let mock: MockTransport
        let authenticator: Authenticator
        let time: F.TestTime
        let issued: F.Counter

        var tokenRequests: [MockTransport.RecordedRequest] {
            mock.recordedRequests.filter { $0.pathWithoutQuery == F.tokenPath }
        }

        init(gate: F.Gate? = nil, tokenError: String? = nil, scope: String? = "read write") {
            let mock = MockTransport()
            let time = F.TestTime()
            let issued = F.Counter()
            let base = Client(
                server: Server(baseURL: Fixtures.baseURL), transport: mock,
                configuration: Client.Configuration(retryPolicy: .disabled))
            mock.stub(.post, F.tokenPath) { _ in
                await gate?.pass()
                if let tokenError { return .json(raw: #"{"error":"\#(tokenError)"}"#, status: 400) }
                let number = issued.next()
                // A refresh token the grant should not carry (§4.4.3): it must be dropped.
                return .json(
                    raw: #"{"access_token":"cc-\#(number)","token_type":"bearer","expires_in":3600,"#
                        + #""refresh_token":"unexpected"}"#)
            }
            F.stubAPI(mock, accepting: { "cc-\(issued.count)" })
            let authenticator = Authenticator(
                refresher: OAuth2ClientCredentialsRefresher(
                    client: base, path: F.tokenPath,
                    authentication: .clientSecretBasic(clientID: "billing", clientSecret: "s3cret"),
                    scope: scope, now: time.closure),
                now: time.closure
            )
            self.client = base.configured { $0.authenticate(with: authenticator) }
            self.mock = mock
            self.authenticator = authenticator
            self.time = time
            self.issued = issued
        }
    }

    @Test("no sign-in: 50 concurrent first calls acquire one token, in one request, and all succeed")
    func acquiresOnce() async throws {
        let gate = F.Gate()
        let harness = Harness(gate: gate)

        let calls = (0..<50).map { _ in Task { try await harness.client.send(Probe()) } }
        await gate.waitForArrivals(1)
        await gate.open()
        for call in calls { #expect(try await call.value == "ok") }

        #expect(harness.tokenRequests.count == 1)
        let token = try #require(harness.tokenRequests.first)
        #expect(token.bodyText == "grant_type=client_credentials&scope=read%20write")
        #expect(token.head.headerFields[.authorization] == "Basic " + Data("billing:s3cret".utf8).base64EncodedString())
        let credential = try #require(try await harness.authenticator.currentCredential())
        #expect(credential.accessToken == "cc-1")
        #expect(credential.refreshToken == nil)
        #expect(credential.expiresAt == F.start.addingTimeInterval(3600))
    }

    @Test("an expiring token is replaced by a new one before use, with the same grant")
    func reacquiresOnExpiry() async throws {
        let harness = Harness()
        _ = try await harness.client.send(Probe())

        harness.time.advance(by: 3600 - 30)  // inside the 60-second refresh window
        _ = try await harness.client.send(Probe())

        #expect(harness.tokenRequests.count == 2)
        #expect(harness.tokenRequests.allSatisfy { $0.bodyText?.hasPrefix("grant_type=client_credentials") ?? false })
        #expect(try await harness.authenticator.currentCredential()?.accessToken == "cc-2")
    }

    @Test("a 401 for the current token: one new token, one replay")
    func reacquiresOn401() async throws {
        let harness = Harness()
        _ = try await harness.client.send(Probe())
        // The server revokes cc-1: from now on it accepts only cc-2.
        _ = harness.issued.next()

        let answer = try await harness.client.send(Probe())

        #expect(answer == "ok")
        #expect(harness.tokenRequests.count == 2)
        #expect(try await harness.authenticator.currentCredential()?.accessToken == "cc-3")
    }

    @Test(
        "token errors are configuration errors, never a sign-out; the next call asks again",
        arguments: [
            ("invalid_client", CourierError.Code.clientAuthenticationFailed),
            ("invalid_grant", .clientAuthenticationFailed),
            ("unauthorized_client", .clientAuthenticationFailed),
            ("invalid_scope", .scopeRejected),
        ]
    )
    func tokenErrors(tokenError: String, code: CourierError.Code) async throws {
        let harness = Harness(tokenError: tokenError)

        let first = await expectCourierError { try await harness.client.send(Probe()) }
        let second = await expectCourierError {
            try await harness.client.send(Probe())
        }

        #expect(first?.code == code)
        #expect(second?.code == code)
        #expect(harness.tokenRequests.count == 2)
        #expect(harness.mock.recordedRequests.count == 2, "no API request goes out unsigned")
    }

    @Test("after a sign-out, the next call acquires a new token")
    func signOutThenAcquire() async throws {
        let harness = Harness()
        _ = try await harness.client.send(Probe())

        try await harness.authenticator.signOut()
        _ = try await harness.client.send(Probe())

        #expect(harness.tokenRequests.count == 2)
        #expect(try await harness.authenticator.currentCredential()?.accessToken == "cc-2")
    }
}
