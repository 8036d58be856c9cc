import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("Credential", .timeLimit(.minutes(1)))
struct CredentialTests {
    typealias F = AuthFixtures

    @Test("description, debugDescription and dump redact both tokens")
    func redaction() {
        let credential = F.signedIn()
        var dumped = ""
        dump(credential, to: &dumped)

        for text in [credential.description, credential.debugDescription, "\(credential)", dumped] {
            #expect(!text.contains("access-1"))
            #expect(!text.contains("refresh-1"))
            #expect(text.contains("<redacted>"))
        }
    }

    @Test("a client's secret is redacted in description and dump, also inside a refresher")
    func clientSecretRedaction() {
        let client = Client(server: Fixtures.server, transport: MockTransport())
        for authentication in [
            OAuth2ClientAuthentication.clientSecretBasic(clientID: "app", clientSecret: "s3cret-basic"),
            .clientSecretPost(clientID: "app", clientSecret: "s3cret-post"),
        ] {
            let refresher = OAuth2RefreshTokenRefresher(client: client, path: "/token", authentication: authentication)
            var dumped = ""
            dump(refresher, to: &dumped)
            var dumpedAuthentication = ""
            dump(authentication, to: &dumpedAuthentication)
            for text in [authentication.description, "\(authentication)", dumpedAuthentication, dumped] {
                #expect(!text.contains("s3cret"))
                #expect(text.contains("app"))
            }
        }
    }

    @Test("encodes and decodes; a missing tokenType and version take their defaults")
    func codable() throws {
        let credential = Credential(accessToken: "a", refreshToken: "r", expiresAt: F.start, version: 4)
        let decoded = try JSONDecoder().decode(Credential.self, from: JSONEncoder().encode(credential))
        #expect(decoded == credential)

        let minimal = try JSONDecoder().decode(Credential.self, from: Data(#"{"accessToken":"a"}"#.utf8))
        #expect(minimal == Credential(accessToken: "a"))
        #expect(minimal.authorizationValue == "Bearer a")
    }

    @Test("expires(within:of:) compares the expiry with a window; no expiry never expires")
    func expiry() {
        let credential = F.signedIn(expiresIn: 30)
        #expect(credential.expires(within: .seconds(60), of: F.start))
        #expect(!credential.expires(within: .seconds(10), of: F.start))
        #expect(credential.expires(within: .zero, of: F.start.addingTimeInterval(31)))
        #expect(!Credential(accessToken: "a").expires(within: .seconds(3600), of: F.start))
    }

    @Test("row 46: tokens never appear in log lines or error descriptions, on success or failure")
    func tokensNeverLogged() async throws {
        let harness = try await F.harness()
        let grantRevoked = F.Shared(false)
        F.stubTokenEndpoint(harness.mock, revoked: grantRevoked)
        F.stubAPI(harness.mock, accepting: { "access-2" })
        harness.mock.stub(nil, "/fail") { _ in F.invalidToken }

        _ = try await harness.client.send(Probe())  // refreshed from access-1 to access-2
        let error = await expectCourierError { try await harness.client.send(Probe(path: "/fail")) }  // to access-3
        grantRevoked.update { $0 = true }
        let ended = await expectCourierError { try await harness.client.send(Probe()) }

        #expect(ended?.code == .reauthenticationRequired)
        let texts = harness.log.allText + [error?.description, ended?.description].compactMap { $0 }
        #expect(!texts.isEmpty)
        for text in texts {
            #expect(!F.secrets.contains { text.contains($0) }, "leaked in: \(text)")
        }
    }
}
