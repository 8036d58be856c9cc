import Courier
import CourierTesting
import Foundation
import Testing

/// The pinning example of the README and of the "Security: TLS, pinning and client certificates" article compiles,
/// builds what it says, and both documents show exactly this code.
@Suite("TLS sample")
struct TLSSampleTests {
    func sample(transport: any Transport, companyRootPEM: String, primaryPin: String, backupPin: String) throws
        -> Client
    {
        // readme-tls:begin
        var tls = TLSOptions()
        tls.trust = .systemAnd(try TLSOptions.Certificate.pem(companyRootPEM))  // or .only([...]) for a private CA
        tls.pins = [try TLSOptions.PinSet(host: "api.example.com", pins: [primaryPin, backupPin])]  // ≥ 2 pins
        tls.minimumVersion = .tls12  // the default; TLS 1.0 and 1.1 are refused
        let api = Server(baseURL: URL(string: "https://api.example.com")!, tls: tls)  // per server, or
        let client = Client(server: api, transport: transport)  // `configuration.tls` for a whole client
        // readme-tls:end
        return client
    }

    static let pemRoot = """
        -----BEGIN CERTIFICATE-----
        AAECAwQFBgcICQ==
        -----END CERTIFICATE-----
        """

    @Test("the sample builds a client whose server carries the options")
    func sampleBuilds() throws {
        let primary = Data(repeating: 7, count: 32).base64EncodedString()
        let backup = Data(repeating: 9, count: 32).base64EncodedString()
        let client = try sample(
            transport: MockTransport(), companyRootPEM: Self.pemRoot, primaryPin: primary,
            backupPin: backup)
        let tls = try #require(client.servers[client.environment]?.tls)
        #expect(tls.trust == .systemAnd([TLSOptions.Certificate(der: Array(0..<10))]))
        #expect(tls.pinSet(for: "API.example.com.")?.pins == [primary, backup])
        #expect(tls.minimumVersion == .tls12)
    }

    @Test("one pin, or a pin that is not a SHA-256, is refused when the options are built")
    func pinValidation() {
        #expect(throws: TLSOptions.Error.self) {
            try TLSOptions.PinSet(host: "api.example.com", pins: [Data(count: 32).base64EncodedString()])
        }
        #expect(throws: TLSOptions.Error.self) {
            try TLSOptions.PinSet(host: "api.example.com", pins: ["short", Data(count: 32).base64EncodedString()])
        }
        #expect(throws: TLSOptions.Error.self) { try TLSOptions.Certificate.pem("no certificate here") }
    }

    @Test("the README and the Security article show the same code as this test")
    func documentsMatch() throws {
        let testFile = URL(fileURLWithPath: #filePath)
        let root = testFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let source = try String(contentsOf: testFile, encoding: .utf8)
        let sample = try ReadmeSampleTests.lines(between: "// readme-tls:begin", and: "// readme-tls:end", in: source)
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let readmeLines = try ReadmeSampleTests.lines(
            between: "<!-- readme-tls:begin -->", and: "<!-- readme-tls:end -->", in: readme
        )
        .filter { !$0.hasPrefix("```") }
        #expect(readmeLines == sample)
        let article = try String(
            contentsOf: root.appendingPathComponent("Sources/CourierCore/Documentation.docc/SecurityTLSPinning.md"),
            encoding: .utf8)
        let articleLines = article.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let start = try #require(articleLines.firstIndex(of: sample[0]), "the article lacks the sample")
        #expect(Array(articleLines[start..<min(articleLines.count, start + sample.count)]) == sample)
    }
}
