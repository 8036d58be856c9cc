import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("HeadersAdapter", .timeLimit(.minutes(1)))
struct HeadersAdapterTests {
    @Test("sets fields on the request")
    func setsFields() async throws {
        let adapted = try await HeadersAdapter(["Accept": "application/json", "X-Request-ID": "42"]).adapt(
            AdapterFixtures.outgoing(), context: AdapterFixtures.context())
        #expect(adapted.head.headerFields[.accept] == "application/json")
        #expect(adapted.head.headerFields.values(named: "x-request-id") == ["42"])
    }

    @Test("replaces earlier fields of the same name, compared case-insensitively")
    func replacesSameName() async throws {
        let original = AdapterFixtures.outgoing(headers: [
            .accept: "text/html", .acceptLanguage: "de", try #require(HTTPField.Name("X-Keep")): "1",
        ])
        let adapted = try await HeadersAdapter(["ACCEPT": "application/json", "accept-language": "en"]).adapt(
            original, context: AdapterFixtures.context())
        #expect(adapted.head.headerFields.values(named: "Accept") == ["application/json"])
        #expect(adapted.head.headerFields.values(named: "Accept-Language") == ["en"])
        #expect(adapted.head.headerFields.values(named: "X-Keep") == ["1"])
    }

    @Test("repeated names in one adapter are all kept, in order, replacing earlier ones")
    func repeatedNamesKeptInOrder() async throws {
        var headers = RequestHeaders()
        headers.append(name: "X-Tag", value: "one")
        headers.append(name: "X-Other", value: "o")
        headers.append(name: "x-tag", value: "two")
        headers.append(name: "X-Tag", value: "three")
        let original = AdapterFixtures.outgoing(headers: [try #require(HTTPField.Name("X-Tag")): "old"])
        let adapted = try await HeadersAdapter(headers).adapt(original, context: AdapterFixtures.context())
        #expect(adapted.head.headerFields.values(named: "X-Tag") == ["one", "two", "three"])
        #expect(adapted.head.headerFields.values(named: "X-Other") == ["o"])
    }

    @Test("HTAB, obs-text and an empty value are allowed")
    func allowedValues() async throws {
        let adapted = try await HeadersAdapter(["X-Tab": "a\tb", "X-Empty": "", "X-Token": "!#$%&'*+-.^_`|~"]).adapt(
            AdapterFixtures.outgoing(), context: AdapterFixtures.context())
        #expect(adapted.head.headerFields.values(named: "X-Tab") == ["a\tb"])
        #expect(adapted.head.headerFields.values(named: "X-Empty") == [""])
        #expect(adapted.head.headerFields.values(named: "X-Token") == ["!#$%&'*+-.^_`|~"])
    }

    @Test("token names with every tchar are allowed", arguments: ["X-Custom", "x_under", "X.Dot", "!#$%&'*+-.^_`|~"])
    func allowedNames(name: String) async throws {
        let adapted = try await HeadersAdapter([name: "v"]).adapt(
            AdapterFixtures.outgoing(), context: AdapterFixtures.context())
        #expect(adapted.head.headerFields.values(named: name) == ["v"])
    }

    static let invalidValues = [
        "a\r\nX-Injected: 1", "a\nb", "a\rb", "a\0b", "\u{01}", "a\u{0B}b", "a\u{0C}b", "\u{1B}[31m", "\u{1F}",
        "a\u{7F}b",
    ]

    @Test("a value with a control character is invalidHeader", arguments: invalidValues)
    func invalidValueDirectly(value: String) async throws {
        let error = await expectCourierError {
            try await HeadersAdapter(["X-Custom": value]).adapt(
                AdapterFixtures.outgoing(), context: AdapterFixtures.context())
        }
        #expect(error?.code == .invalidHeader)
        #expect(error?.stage == .adapt)
        #expect(error?.message?.contains("X-Custom") == true)
    }

    static let invalidNames = [
        "", "X Space", "X:Colon", "X(Paren)", "Ünicode", "X\r\nY", "X\u{7F}", "X@", "X,Y", "X/Y", "X\"Y", "X[Y]",
        "X{Y}", "X;Y", "X=Y", "X?", "X\\Y", "\tX",
    ]

    @Test("a name that is not an RFC 9110 token is invalidHeader", arguments: invalidNames)
    func invalidNameDirectly(name: String) async throws {
        let error = await expectCourierError {
            try await HeadersAdapter([name: "v"]).adapt(AdapterFixtures.outgoing(), context: AdapterFixtures.context())
        }
        #expect(error?.code == .invalidHeader)
        #expect(error?.stage == .adapt)
    }

    @Test("an invalid field after valid ones still fails the whole adapter")
    func invalidAfterValid() async throws {
        var headers = RequestHeaders()
        headers.append(name: "Accept", value: "application/json")
        headers.append(name: "X-Bad", value: "a\nb")
        let adapter = HeadersAdapter(headers)
        await #expect(throws: CourierError.self) {
            _ = try await adapter.adapt(AdapterFixtures.outgoing(), context: AdapterFixtures.context())
        }
    }

    @Test("a sensitive header's bad value is not echoed in the error")
    func sensitiveValueNotEchoed() async throws {
        let (client, mock) = AdapterFixtures.answeringClient()
        let error = await expectCourierError {
            try await client.send(
                AdapterFixtures.probe(adapters: [.header("Authorization", "Bearer s3cr3t\r\nX-Injected: 1")]))
        }
        #expect(error?.code == .invalidHeader)
        #expect(error.map { !"\($0)".contains("s3cr3t") } == true)
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test("through a client, request headers replace the server's headers of the same name")
    func throughClientReplacesServerHeaders() async throws {
        let mock = MockTransport()
        mock.enqueue(.text("ok"))
        let server = Server(baseURL: Fixtures.baseURL, headers: ["X-Api-Version": "1", "X-Env": "prod"])
        let client = Client(server: server, transport: mock)
        _ = try await client.send(AdapterFixtures.probe(headers: ["x-api-version": "2"]))
        let sent = try #require(mock.recordedRequests.first)
        #expect(sent.head.headerFields.values(named: "X-Api-Version") == ["2"])
        #expect(sent.head.headerFields.values(named: "X-Env") == ["prod"])
    }

    @Test("through a client, static-member .header and .headers apply in order")
    func throughClientStaticMembers() async throws {
        let (client, mock) = AdapterFixtures.answeringClient {
            $0.adapters.append(.headers(["X-Client": "c", "X-Both": "client"]))
        }
        _ = try await client.send(
            AdapterFixtures.probe(headers: ["X-Both": "request"], adapters: [.header("X-Extra", "e")]))
        let fields = try #require(mock.recordedRequests.first).head.headerFields
        #expect(fields.values(named: "X-Client") == ["c"])
        #expect(fields.values(named: "X-Extra") == ["e"])
        // Client adapters run after the request's, so the client's value replaces the request's.
        #expect(fields.values(named: "X-Both") == ["client"])
    }

    @Test("name and static-member lookup")
    func nameAndLookup() {
        let adapter: any RequestAdapter = .header("A", "b")
        #expect(adapter.name == "headers")
        #expect((adapter as? HeadersAdapter)?.headers.fields == [RequestHeaders.Field(name: "A", value: "b")])
    }
}
