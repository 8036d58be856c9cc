import Courier
import CourierOpenAPI
import CourierTestServer
import Foundation
import OpenAPIRuntime
import Testing

/// The README's "OpenAPI-generated clients" sample compiles, runs against the embedded server, and is what the
/// README shows.
@Suite("README: OpenAPI-generated clients", .timeLimit(.minutes(1)))
struct ReadmeSampleTests {
    func sample(baseURL: URL, authenticator: Authenticator) async throws -> String {
        // readme-openapi:begin
        let courier = Courier.Client(baseURL: baseURL).configured {
            $0.authenticate(with: authenticator)  // bearer token, refreshed on 401
            $0.cache = HTTPCache.memory()  // cacheable responses, streamed ones too, served while fresh
        }
        let transport = CourierTransport(client: courier)  // every operation through Courier's pipeline
        let api = Client(serverURL: try Servers.Server1.url(), transport: transport)  // the generated client
        let echo = try await api.getCached(path: .init(seconds: 60)).ok.body.json  // retried, refreshed, cached
        // readme-openapi:end
        return echo.headers.additionalProperties["Authorization"] ?? ""
    }

    @Test("the sample runs: its operation goes to the Courier client's server, signed by the authenticator")
    func sampleRuns() async throws {
        try await withTestServer { server in
            let refresher = OAuth2RefreshTokenRefresher(
                client: Courier.Client(baseURL: server.baseURL), path: "/oauth/token", clientID: "readme")
            let authenticator = Authenticator(refresher: refresher)
            try await authenticator.signIn(Credential(accessToken: "readme-token"))
            #expect(try await sample(baseURL: server.baseURL, authenticator: authenticator) == "Bearer readme-token")
        }
    }

    @Test("the README shows the same code as this test")
    func readmeMatchesThisFile() throws {
        let file = URL(fileURLWithPath: #filePath)
        let root = file.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: file, encoding: .utf8)
        let readmeLines = try Self.lines(
            between: "<!-- readme-openapi:begin -->", and: "<!-- readme-openapi:end -->", in: readme
        ).filter { !$0.hasPrefix("```") }
        let sourceLines = try Self.lines(between: "// readme-openapi:begin", and: "// readme-openapi:end", in: source)
        #expect(!readmeLines.isEmpty)
        #expect(readmeLines == sourceLines)
    }

    /// The non-empty lines between two markers, trimmed.
    static func lines(between begin: String, and end: String, in text: String) throws -> [String] {
        let all = text.components(separatedBy: "\n")
        let start = try #require(all.firstIndex { $0.hasSuffix(begin) })
        let stop = try #require(all.firstIndex { $0.hasSuffix(end) })
        return all[(start + 1)..<stop].map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
