import Courier
import CourierCore
import CourierPostgres
import Crypto
import Foundation
import PostgresNIO
import Testing

/// The README's "Running a fleet" sample compiles and is what the README shows.
@Suite("README: running a fleet")
struct ReadmeFleetSampleTests {
    func sample(postgres: PostgresClient, base: Client, credentialKey: SymmetricKey, cacheKey: SymmetricKey) -> Client {
        // readme-fleet:begin
        let store = PostgresCredentialStore(client: postgres, name: "example-api", key: credentialKey)
        let refresher = OAuth2RefreshTokenRefresher(client: base, path: "/oauth/token", clientID: "svc")
        let authenticator = Authenticator(store: store, refresher: store.refresher(wrapping: refresher))
        let api = base.configured {
            $0.authenticate(with: authenticator)
            $0.cache = HTTPCache(store: PostgresCacheStore(client: postgres, namespace: "example-api", key: cacheKey))
        }
        // readme-fleet:end
        return api
    }

    @Test("the sample configures authentication and a shared cache")
    func sampleConfigures() throws {
        let postgres = PostgresClient(
            configuration: .init(host: "127.0.0.1", username: "courier", password: nil, database: nil, tls: .disable))
        let base = Client(baseURL: URL(string: "https://api.example.com")!)
        let api = sample(
            postgres: postgres, base: base, credentialKey: SymmetricKey(size: .bits256),
            cacheKey: SymmetricKey(size: .bits256))
        #expect(api.configuration.cache != nil)
        #expect(api.configuration.adapters.count > base.configuration.adapters.count)
    }

    @Test("the README shows the same code as this test")
    func readmeMatchesThisFile() throws {
        let testFile = URL(fileURLWithPath: #filePath)
        let root = testFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: testFile, encoding: .utf8)
        let readmeLines = try Self.lines(
            between: "<!-- readme-fleet:begin -->", and: "<!-- readme-fleet:end -->", in: readme
        ).filter { !$0.hasPrefix("```") }
        let sourceLines = try Self.lines(between: "// readme-fleet:begin", and: "// readme-fleet:end", in: source)
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
