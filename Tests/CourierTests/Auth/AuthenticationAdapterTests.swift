import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("AuthenticationAdapter", .timeLimit(.minutes(1)))
struct AuthenticationAdapterTests {
    typealias F = AuthFixtures

    @Test("row 36: no credential goes to a foreign origin; the refresh request carries none; never in a query")
    func credentialStaysHome() async throws {
        let harness = try await F.harness()
        F.stubTokenEndpoint(harness.mock)
        F.stubAPI(harness.mock, accepting: { "access-2" })
        harness.mock.stub(nil, "/asset", with: .text("cdn"))

        var cdn = Probe(path: "/asset")
        cdn.server = Server(baseURL: URL(string: "https://cdn.example.net")!)
        #expect(try await harness.client.send(cdn) == "cdn")
        var withQuery = Probe(path: "/probe")
        withQuery.query = ["page": 2]
        #expect(try await harness.client.send(withQuery) == "ok")

        let recorded = harness.mock.recordedRequests
        let asset = try #require(recorded.first { $0.pathWithoutQuery == "/asset" })
        #expect(asset.head.headerFields[.authorization] == nil)
        let token = try #require(harness.tokenRequests.onlyElement)
        #expect(token.head.headerFields[.authorization] == nil)
        #expect(token.query == nil)
        for request in recorded {
            let path = request.head.path ?? ""
            #expect(!F.secrets.contains { path.contains($0) })
        }
    }

    @Test("the refresh request is a form POST of the refresh-token grant")
    func refreshRequestShape() async throws {
        let harness = try await F.harness()
        F.stubTokenEndpoint(harness.mock)
        F.stubAPI(harness.mock, accepting: { "access-2" })

        _ = try await harness.client.send(Probe())

        let token = try #require(harness.tokenRequests.onlyElement)
        #expect(token.head.method == .post)
        #expect(token.head.headerFields[.contentType]?.hasPrefix("application/x-www-form-urlencoded") == true)
        #expect(token.bodyText == "client_id=courier-tests&grant_type=refresh_token&refresh_token=refresh-1")
    }

    @Test(
        "authentication requirements: none skips, optional signs when signed in, required fails when signed out",
        arguments: [
            (AuthenticationRequirement.none, true, nil as String?, nil as CourierError.Code?),
            (.optional, true, "Bearer access-1", nil),
            (.optional, false, nil, nil),
            (.required, true, "Bearer access-1", nil),
            (.required, false, nil, .missingCredential),
        ]
    )
    func requirements(
        requirement: AuthenticationRequirement,
        signedIn: Bool,
        expected: String?,
        failure: CourierError.Code?
    ) async throws {
        let harness = try await F.harness(signIn: signedIn ? F.signedIn() : nil)
        harness.mock.stub(nil, "/probe") { _ in .text("ok") }
        var probe = Probe()
        probe.authentication = requirement

        if let failure {
            let error = await expectCourierError { try await harness.client.send(probe) }
            #expect(error?.code == failure)
            #expect(harness.mock.recordedRequests.isEmpty)
        } else {
            #expect(try await harness.client.send(probe) == "ok")
            #expect(harness.mock.recordedRequests.first?.head.headerFields[.authorization] == expected)
        }
    }

    @Test("explicit origins replace the client's servers")
    func explicitOrigins() async throws {
        let authenticator = Authenticator(refresher: F.ScriptedRefresher(), now: { F.start })
        try await authenticator.signIn(F.signedIn())
        let (client, mock) = Fixtures.client { configuration in
            configuration.authenticate(
                with: authenticator, origins: [Origin(scheme: "https", host: "files.example.com")])
        }
        mock.stub(nil, "/probe") { _ in .text("ok") }
        var files = Probe()
        files.server = Server(baseURL: URL(string: "https://FILES.example.com:443")!)

        _ = try await client.send(Probe())
        _ = try await client.send(files)

        #expect(mock.recordedRequests.map { $0.head.headerFields[.authorization] } == [nil, "Bearer access-1"])
    }
}
