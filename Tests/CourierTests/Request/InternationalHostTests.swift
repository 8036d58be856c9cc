import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// An internationalized host name goes on the wire in its ASCII form (IDNA, RFC 5891), wherever it comes from.
@Suite("International host names")
struct InternationalHostTests {
    @Test(
        "a base URL's international host is sent as punycode",
        arguments: [
            ("https://bücher.test/api", "xn--bcher-kva.test"),
            ("https://xn--bcher-kva.test/api", "xn--bcher-kva.test"),
            ("https://b%C3%BCcher.test/api", "xn--bcher-kva.test"),
            ("https://example.рф:8443/api", "example.xn--p1ai:8443"),
            ("https://api.example.com/api", "api.example.com"),
            ("https://[::1]:8443/api", "[::1]:8443"),
        ]
    )
    func baseURL(url: String, authority: String) async throws {
        let baseURL = try #require(URL(string: url))
        let (client, mock) = AdapterFixtures.answeringClient(baseURL: baseURL)
        _ = try await client.send(Probe<String>())
        let sent = try #require(mock.recordedRequests.first)
        #expect(sent.head.authority == authority)
        #expect(sent.head.path == "/api/probe")
    }

    @Test("a redirect to an international host is followed to its punycode name")
    func redirect() async throws {
        let (client, mock) = Fixtures.client()
        mock.enqueue(.status(302, headerFields: [.location: "https://example.рф/next"]))
        mock.enqueue(.status(302, headerFields: [.location: "https://b%C3%BCcher.test/last"]))
        mock.enqueue(.text("ok"))
        _ = try await client.send(Probe<String>())
        #expect(mock.recordedRequests.map(\.head.authority).dropFirst() == ["example.xn--p1ai", "xn--bcher-kva.test"])
    }
}
