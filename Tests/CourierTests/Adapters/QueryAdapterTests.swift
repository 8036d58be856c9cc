import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("QueryAdapter", .timeLimit(.minutes(1)))
struct QueryAdapterTests {
    /// Reliability row 14: values a form-decoding server would otherwise misread.
    static let rfc3986Values: [(value: String, encoded: String)] = [
        ("a+b", "a%2Bb"),
        ("x&y=z", "x%26y%3Dz"),
        (";", "%3B"),
        (" ", "%20"),
        ("a b", "a%20b"),
        ("é", "%C3%A9"),
        ("日本", "%E6%97%A5%E6%9C%AC"),
        ("😀", "%F0%9F%98%80"),
        ("2024-01-02T00:00:00+01:00", "2024-01-02T00%3A00%3A00%2B01%3A00"),
        ("#frag", "%23frag"),
        ("?q", "%3Fq"),
        ("/path", "%2Fpath"),
        ("100%", "100%25"),
        ("%2B", "%252B"),
        ("\r\nX: y", "%0D%0AX%3A%20y"),
        ("AZaz09-._~", "AZaz09-._~"),
    ]

    @Test("values are encoded per RFC 3986 with uppercase hex", arguments: rfc3986Values)
    func encodesValuesDirectly(value: String, encoded: String) async throws {
        let adapted = try await QueryAdapter(["v": value]).adapt(
            AdapterFixtures.outgoing(path: "/search"), context: AdapterFixtures.context())
        #expect(adapted.head.path == "/search?v=\(encoded)")
    }

    @Test("keys are encoded like values", arguments: rfc3986Values)
    func encodesKeysDirectly(key: String, encoded: String) async throws {
        let adapted = try await QueryAdapter([key: "1"]).adapt(
            AdapterFixtures.outgoing(path: "/search"), context: AdapterFixtures.context())
        #expect(adapted.head.path == "/search?\(encoded)=1")
    }

    @Test("through a client, values reach the transport encoded", arguments: rfc3986Values)
    func encodesValuesThroughClient(value: String, encoded: String) async throws {
        let (client, mock) = AdapterFixtures.answeringClient()
        _ = try await client.send(AdapterFixtures.probe(path: "/search", query: ["v": value]))
        let sent = try #require(mock.recordedRequests.first)
        #expect(sent.head.path == "/search?v=\(encoded)")
        #expect(sent.query == "v=\(encoded)")
    }

    @Test("appends after a query already in the path with &")
    func appendsAfterExistingQuery() async throws {
        let adapted = try await QueryAdapter(["b": "2"]).adapt(
            AdapterFixtures.outgoing(path: "/items?a=1"), context: AdapterFixtures.context())
        #expect(adapted.head.path == "/items?a=1&b=2")
    }

    @Test("two query adapters through a client give one query string")
    func twoQueryAdapters() async throws {
        let (client, mock) = AdapterFixtures.answeringClient()
        let probe = AdapterFixtures.probe(path: "/items", query: ["a": "1 2"], adapters: [.query(["b": "x&y"])])
        _ = try await client.send(probe)
        #expect(mock.recordedRequests.first?.head.path == "/items?a=1%202&b=x%26y")
    }

    @Test("several parameters are sorted by key and joined with &")
    func sortedPairs() async throws {
        let adapted = try await QueryAdapter(["z": 1, "a": true, "m": "x"]).adapt(
            AdapterFixtures.outgoing(path: "/p"), context: AdapterFixtures.context())
        #expect(adapted.head.path == "/p?a=true&m=x&z=1")
    }

    @Test("empty parameters leave the path without a ?")
    func emptyParameters() async throws {
        let empty: [String: String] = [:]
        let adapted = try await QueryAdapter(Parameters(empty)).adapt(
            AdapterFixtures.outgoing(path: "/p"), context: AdapterFixtures.context())
        #expect(adapted.head.path == "/p")
    }

    @Test("uses the client's query encoder from the context")
    func usesContextEncoder() async throws {
        let context = AdapterFixtures.context(
            queryEncoder: URLEncodedFormEncoder(arrayEncoding: .indexed, boolEncoding: .numeric))
        let adapted = try await QueryAdapter(["flag": true, "ids": [3, 4]]).adapt(
            AdapterFixtures.outgoing(path: "/p"), context: context)
        #expect(adapted.head.path == "/p?flag=1&ids%5B0%5D=3&ids%5B1%5D=4")
    }

    @Test("a per-request encoder overrides the client's")
    func perRequestEncoderDirectly() async throws {
        let context = AdapterFixtures.context(queryEncoder: URLEncodedFormEncoder(boolEncoding: .numeric))
        let adapter = QueryAdapter(
            ["flag": true, "ids": [3, 4]], encoder: URLEncodedFormEncoder(arrayEncoding: .noBrackets))
        #expect(adapter.encoder != nil)
        let adapted = try await adapter.adapt(AdapterFixtures.outgoing(path: "/p"), context: context)
        #expect(adapted.head.path == "/p?flag=true&ids=3&ids=4")
    }

    @Test("a per-request encoder overrides the client's, through a client")
    func perRequestEncoderThroughClient() async throws {
        let (client, mock) = AdapterFixtures.answeringClient {
            $0.queryEncoder = URLEncodedFormEncoder(boolEncoding: .numeric)
        }
        let probe = AdapterFixtures.probe(
            path: "/a",
            query: ["client": true],
            adapters: [.query(["request": true], encoder: URLEncodedFormEncoder(boolEncoding: .literal))]
        )
        _ = try await client.send(probe)
        #expect(mock.recordedRequests.first?.head.path == "/a?client=1&request=true")
    }

    @Test("an encoding failure is encodingFailed at the adapt stage, with the EncodingError underneath")
    func encodingFailureDirectly() async throws {
        let error = await expectCourierError {
            try await QueryAdapter(["x": Double.nan]).adapt(
                AdapterFixtures.outgoing(), context: AdapterFixtures.context())
        }
        #expect(error?.code == .encodingFailed)
        #expect(error?.stage == .adapt)
        #expect(error?.underlyingError is EncodingError)
    }

    @Test("a non-keyed value is an encoding failure, not a silently empty query")
    func nonKeyedValue() async throws {
        let error = await expectCourierError {
            try await QueryAdapter(Parameters([1, 2])).adapt(
                AdapterFixtures.outgoing(), context: AdapterFixtures.context())
        }
        #expect(error?.code == .encodingFailed)
    }

    @Test("through a client, an encoding failure fails the call and nothing is sent")
    func encodingFailureThroughClient() async throws {
        let (client, mock) = AdapterFixtures.answeringClient()
        let error = await expectCourierError {
            try await client.send(AdapterFixtures.probe(query: ["x": Double.infinity]))
        }
        #expect(error?.code == .encodingFailed)
        #expect(error?.stage == .adapt)
        #expect(error?.trace.adapterNames(attempt: 1) == ["method", "query"])
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test("name and static-member lookup")
    func nameAndLookup() {
        let adapter: any RequestAdapter = .query(["a": 1])
        #expect(adapter.name == "query")
        #expect((adapter as? QueryAdapter)?.encoder == nil)
    }
}
