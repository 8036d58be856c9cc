import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// Reliability rows 10–14 and 17 (and 45): what Courier checks before a byte is written.
@Suite("Request validation", .timeLimit(.minutes(1)))
struct RequestValidationTests {
    /// Sends `probe` through a client on a fresh mock and returns what the mock recorded.
    private func send(
        _ probe: Probe<String>,
        baseURL: URL = Fixtures.baseURL,
        configure: (inout Client.Configuration) -> Void = { _ in }
    ) async throws -> MockTransport.RecordedRequest {
        let (client, mock) = AdapterFixtures.answeringClient(baseURL: baseURL, configure: configure)
        _ = try await client.send(probe)
        #expect(mock.recordedRequests.count == 1)
        return try #require(mock.recordedRequests.first)
    }

    /// Sends `probe`, expects a `CourierError`, and checks that the mock recorded nothing.
    private func reject(
        _ probe: Probe<String>,
        baseURL: URL = Fixtures.baseURL,
        configure: (inout Client.Configuration) -> Void = { _ in },
        sourceLocation: SourceLocation = #_sourceLocation
    ) async -> CourierError? {
        let (client, mock) = AdapterFixtures.answeringClient(baseURL: baseURL, configure: configure)
        let error = await expectCourierError({ try await client.send(probe) }, sourceLocation: sourceLocation)
        #expect(
            mock.recordedRequests.isEmpty, "a rejected request reached the transport", sourceLocation: sourceLocation)
        return error
    }

    /// Whether `path` can only be one request-target: visible ASCII, no `#`, at most one `?`.
    private func isSafeRequestTarget(_ path: String) -> Bool {
        path.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "#") }
            && path.utf8.filter { $0 == UInt8(ascii: "?") }.count <= 1
    }

    // MARK: - Row 11: header injection

    static let controlCharacterValues = [
        "a\r\nX-Injected: 1", "a\r\n\r\nGET /admin HTTP/1.1", "a\nb", "a\rb", "a\0b", "\u{01}", "a\u{08}b",
        "a\u{0B}b", "a\u{0C}b", "a\u{1B}b", "a\u{1F}b", "a\u{7F}b", "trailing\r\n",
    ]

    @Test(
        "a request header value with CR, LF, NUL, another CTL or DEL is invalidHeader; nothing is sent",
        arguments: controlCharacterValues)
    func invalidRequestHeaderValue(value: String) async throws {
        let error = await reject(AdapterFixtures.probe(headers: ["X-Custom": value]))
        #expect(error?.code == .invalidHeader)
    }

    @Test(
        "a server header value with a control character is invalidHeader at resolve, naming the server; nothing is sent",
        arguments: ["a\r\nX-Injected: 1", "a\0b", "a\u{7F}b"])
    func invalidServerHeaderValue(value: String) async throws {
        let mock = MockTransport()
        mock.enqueue(.text("ok"))
        let client = Client(server: Server(baseURL: Fixtures.baseURL, headers: ["X-Api-Key": value]), transport: mock)
        let error = await expectCourierError { try await client.send(AdapterFixtures.probe()) }
        #expect(error?.code == .invalidHeader)
        // The server's configuration, read when the request is resolved: no adapter ran.
        #expect(error?.stage == .resolve)
        #expect(error?.message?.contains("production server's headers") == true)
        #expect(mock.recordedRequests.isEmpty)
    }

    static let invalidNames = [
        "X Space", " X", "X:Colon", ":authority", "X(Paren)", "X)", "Ünicode", "X-é", "X\r\nY", "X\nY", "X\0",
        "X\u{7F}", "X\tY", "X@Y", "X,Y", "X/Y", "X\"Y", "X[Y]", "X{Y}", "X;Y", "X=Y", "X?", "X\\Y", "",
    ]

    @Test("a header name that is not an RFC 9110 token is invalidHeader; nothing is sent", arguments: invalidNames)
    func invalidHeaderName(name: String) async throws {
        let error = await reject(AdapterFixtures.probe(headers: [name: "v"]))
        #expect(error?.code == .invalidHeader)
    }

    @Test("HTAB inside a value is allowed and sent as is")
    func htabAllowed() async throws {
        let sent = try await send(AdapterFixtures.probe(headers: ["X-Tab": "a\tb", "X-Spaces": "a b  c"]))
        #expect(sent.head.headerFields.values(named: "X-Tab") == ["a\tb"])
        #expect(sent.head.headerFields.values(named: "X-Spaces") == ["a b  c"])
    }

    @Test("a sensitive header's injected value never appears in the error description")
    func sensitiveValueNotInDescription() async throws {
        let error = await reject(AdapterFixtures.probe(headers: ["Cookie": "session=hunter2\r\nX-Admin: 1"]))
        #expect(error?.code == .invalidHeader)
        #expect(error.map { !$0.description.contains("hunter2") } == true)
    }

    @Test("an adapter writing CR/LF straight into HTTPFields cannot split the header block")
    func rawFieldsCannotSplit() async throws {
        let name = try #require(HTTPField.Name("X-Raw"))
        let sent = try await send(
            AdapterFixtures.probe(adapters: [
                .custom("raw") { request, _ in
                    var request = request
                    request.head.headerFields[name] = "a\r\nX-Injected: 1"
                    return request
                }
            ]))
        #expect(sent.head.headerFields[HTTPField.Name("X-Injected")!] == nil)
        for field in sent.head.headerFields {
            #expect(field.value.utf8.allSatisfy { $0 >= 0x20 || $0 == 0x09 }, "\(field.name): \(field.value)")
        }
    }

    // MARK: - Row 10: userinfo

    static let userinfoURLs = [
        "https://user:hunter2@api.example.com",
        "https://user:hunter2@api.example.com:8443/v1",
        "https://:hunter2@api.example.com",
        "https://user@api.example.com",
        "https://us%40er:hun%3Ater2@api.example.com",
        "https://api.example.com@evil.example.com",
        "http://user:hunter2@127.0.0.1:8080",
    ]

    @Test(
        "userinfo in the base URL is invalidURL, nothing is sent and the password is in no description",
        arguments: userinfoURLs)
    func userinfoInBaseURL(url: String) async throws {
        let error = await reject(AdapterFixtures.probe(), baseURL: try #require(URL(string: url)))
        #expect(error?.code == .invalidURL)
        #expect(error?.stage == .resolve)
        let error1 = try #require(error)
        for text in [error1.description, "\(error1)", String(reflecting: error1), error1.message ?? ""] {
            #expect(!text.contains("hunter2"))
            #expect(!text.contains("hun%3Ater2"))
        }
    }

    @Test("userinfo in a request's own server is invalidURL")
    func userinfoInRequestServer() async throws {
        let server = Server(baseURL: try #require(URL(string: "https://admin:hunter2@upload.example.com")))
        let error = await reject(AdapterFixtures.probe(server: server))
        #expect(error?.code == .invalidURL)
        #expect(error.map { !$0.description.contains("hunter2") } == true)
    }

    @Test("userinfo an adapter puts in the authority is invalidURL and the password stays out of the error")
    func userinfoFromAdapter() async throws {
        let probe = AdapterFixtures.probe(adapters: [
            AdapterFixtures.retarget(authority: "admin:hunter2@api.example.com")
        ])
        let error = await reject(probe)
        #expect(error?.code == .invalidURL)
        #expect(error?.stage == .validate)
        let description = try #require(error).description
        #expect(!description.contains("hunter2"))
    }

    @Test(
        "an authority an adapter sets with a byte no host has is invalidURL; nothing is sent",
        arguments: [
            "api.example.com/admin", "api.example.com evil", "api.example.com?x", "api.example.com#f", "a\u{7F}b",
            "api.example.com:evil", "api.example.com:1:2", "api.example.com:65536", "api.example.com:", "[::1]x",
            "api.example.com:0",
        ])
    func invalidAuthorityFromAdapter(authority: String) async throws {
        let probe = AdapterFixtures.probe(adapters: [AdapterFixtures.retarget(authority: authority)])
        let error = await reject(probe)
        #expect(error?.code == .invalidURL)
        #expect(error?.stage == .validate)
        let message = error?.message ?? ""
        #expect(message.contains("has a byte no host or port has") || message.contains("has a port"), "\(message)")
    }

    // MARK: - Rows 12–13: path parameters and literal paths

    static let pathSegments: [(value: String, encoded: String)] = [
        ("a/b", "a%2Fb"),
        ("a/.../b", "a%2F...%2Fb"),
        (".hidden/..x", ".hidden%2F..x"),
        ("%2F", "%252F"),
        ("%252F", "%25252F"),
        ("100%", "100%25"),
        ("a b", "a%20b"),
        ("?x", "%3Fx"),
        ("#y", "%23y"),
        ("a\r\nHost: evil.com", "a%0D%0AHost:%20evil.com"),
        ("é", "%C3%A9"),
        ("!$&'()*+,;=:@", "!$&'()*+,%3B=:@"),
        ("..;", "..%3B"),
        ("bob;x=1", "bob%3Bx=1"),
        ("AZaz09-._~", "AZaz09-._~"),
        ("42", "42"),
    ]

    @Test("a pathSegment value is encoded exactly once, as one segment, with uppercase hex", arguments: pathSegments)
    func pathSegment(value: String, encoded: String) async throws {
        let sent = try await send(AdapterFixtures.probe(path: "/files/\(pathSegment: value)/meta"))
        #expect(sent.head.path == "/files/\(encoded)/meta")
        #expect(sent.pathWithoutQuery.split(separator: "/", omittingEmptySubsequences: false).count == 4)
        #expect(isSafeRequestTarget(sent.head.path ?? ""))
    }

    @Test("a pathSegment value lands under the base URL's path prefix")
    func pathSegmentUnderBasePath() async throws {
        let sent = try await send(
            AdapterFixtures.probe(path: "/users/\(pathSegment: "a/b")"),
            baseURL: try #require(URL(string: "https://api.example.com/v1/")))
        #expect(sent.head.path == "/v1/users/a%2Fb")
    }

    @Test("a base URL made relative to another (URL(string:relativeTo:)) is resolved against it")
    func relativeBaseURL() async throws {
        let root = try #require(URL(string: "https://api.example.com/"))
        let sent = try await send(
            AdapterFixtures.probe(path: "/users"), baseURL: try #require(URL(string: "v2/", relativeTo: root)))
        // Before: taken apart without its base, "v2/" had no scheme, and every call failed with invalidURL.
        #expect(sent.head.authority == "api.example.com")
        #expect(sent.head.path == "/v2/users")
    }

    @Test("a base URL whose port is not 1 to 65535 is invalidURL at resolve; nothing is sent", arguments: [0, 70_000])
    func basePortOutOfRange(port: Int) async throws {
        let error = await reject(
            AdapterFixtures.probe(path: "/users"), baseURL: try #require(URL(string: "https://api.example.com:\(port)"))
        )
        #expect(error?.code == .invalidURL && error?.stage == .resolve, "\(String(describing: error))")
        #expect(error?.message?.contains("port \(port)") == true, "\(String(describing: error))")
    }

    @Test("a non-string pathSegment uses its description")
    func pathSegmentNonString() async throws {
        let sent = try await send(AdapterFixtures.probe(path: "/users/\(pathSegment: 42)/\(pathSegment: -1.5)"))
        #expect(sent.head.path == "/users/42/-1.5")
    }

    @Test(
        "a pathSegment of exactly . or .. (or a literal %2E dot segment, which servers resolve as one) fails with invalidURL",
        arguments: [
            "/users/\(pathSegment: ".")/profile", "/users/\(pathSegment: "..")/profile", "/a/%2e%2E", "/a/.%2E/b",
            "/a/%2E./b",
            // nginx decodes %2F (and %5C) before it resolves dot segments: these reach the parent path there.
            "/files/\(pathSegment: "../admin")", "/files/\(pathSegment: "a/..")/x", "/files/\(pathSegment: "./x")",
            "/files/\(pathSegment: "a/../../etc")", "/files/\(pathSegment: #"\..\"#)", "/a/..%2f", "/a/%5c..",
        ])
    func dotSegments(path: String) async throws {
        let error = await expectCourierError { try await send(AdapterFixtures.probe(path: path)) }
        #expect(error?.code == .invalidURL, "\(path)")
        #expect(error?.message?.contains("dot segment") == true)
    }

    @Test(
        "an empty pathSegment value (or a NUL, %00) fails with invalidURL before anything is sent; not an empty query",
        arguments: [
            "/users/\(pathSegment: "")/posts", "/users/\(pathSegment: "")", "/a/%00/b", "/a/\(pathSegment: "\0")",
        ])
    func emptySegments(path: String) async throws {
        let error = await expectCourierError { try await send(AdapterFixtures.probe(path: path)) }
        #expect(error?.code == .invalidURL, "\(path)")
        #expect(error?.message?.contains("empty pathSegment") == true)
        // The error names the request it refused.
        #expect(error?.request?.path?.hasPrefix(path.prefix(3)) == true, "\(String(describing: error))")
        #expect("\(String(describing: error))".contains("GET https://"))
        let queried = try await send(AdapterFixtures.probe(path: "/users", query: ["id": ""]))
        #expect(queried.head.path == "/users?id=")
    }

    @Test(
        "segments with %2E next to other characters are sent as written; the query is not a path",
        arguments: ["/a/%2E%2Ea/b", "/a/x%2E/b", "/a/%2E%2E%2E", "/v1.2/%2Ejson"])
    func encodedDotsElsewhere(path: String) async throws {
        let sent = try await send(AdapterFixtures.probe(path: path))
        #expect(sent.head.path == path)
        let queried = try await send(AdapterFixtures.probe(path: path, query: ["up": "..", "next": "%2E%2E"]))
        #expect(queried.head.path?.hasPrefix(path + "?") == true)
    }

    static let literalPaths: [(path: String, encoded: String)] = [
        ("/search?q=1", "/search%3Fq=1"),
        ("/a#b", "/a%23b"),
        ("/a b", "/a%20b"),
        ("/a b/c d", "/a%20b/c%20d"),
        ("/a\r\nHost: evil.com", "/a%0D%0AHost:%20evil.com"),
        ("/a HTTP/1.1\r\nX-Injected: 1\r\n\r\n", "/a%20HTTP/1.1%0D%0AX-Injected:%201%0D%0A%0D%0A"),
        ("/a\tb", "/a%09b"),
        ("/é", "/%C3%A9"),
        ("/100%", "/100%25"),
        ("/a%zz", "/a%25zz"),
        ("/a%2Fb", "/a%2Fb"),
        ("/a%20b/c d", "/a%20b/c%20d"),
        ("/ok/a b?c#d", "/ok/a%20b%3Fc%23d"),
        // A triplet stays as written next to a byte that needs encoding, in the same segment.
        ("/files/Q1%20report final.pdf", "/files/Q1%20report%20final.pdf"),
        ("/notes/\(pathSegment: "a/b") draft", "/notes/a%2Fb%20draft"),
        ("/p/100%25 off%", "/p/100%25%20off%25"),
    ]

    @Test(
        "a literal path with ?, #, space or CR/LF is encoded so the request line cannot be split",
        arguments: literalPaths)
    func literalPath(path: String, encoded: String) async throws {
        let sent = try await send(AdapterFixtures.probe(path: path))
        #expect(sent.head.path == encoded)
        #expect(isSafeRequestTarget(sent.head.path ?? ""))
        #expect(sent.query == nil)
    }

    @Test("a literal ? in the path and a query parameter give exactly one query")
    func literalQuestionMarkAndQuery() async throws {
        let sent = try await send(AdapterFixtures.probe(path: "/a?b", query: ["c": "d?e"]))
        #expect(sent.head.path == "/a%3Fb?c=d%3Fe")
        #expect(sent.pathWithoutQuery == "/a%3Fb")
        #expect(sent.query == "c=d%3Fe")
    }

    /// An adapter that overwrites the request's path (HTTPTypes turns CTLs in it into spaces as it is stored).
    private func settingPath(_ path: String) -> ClosureAdapter {
        .custom("path") { request, _ in
            var request = request
            request.head.path = path
            return request
        }
    }

    @Test(
        "an adapter that puts a space, control character or # inside the path is invalidURL; nothing is sent",
        arguments: ["/a b", "/a\r\nX: y", "/a\nb", "/a\rb", "/a\0b", "/a#frag", "/a\u{7F}b", "/a\tb", "/a\u{01}b"])
    func unsafePathFromAdapter(path: String) async throws {
        let error = await reject(AdapterFixtures.probe(adapters: [settingPath(path)]))
        #expect(error?.code == .invalidURL)
        #expect(error?.stage == .validate)
    }

    @Test(
        "trailing control characters an adapter puts in the path are dropped by HTTPTypes; the target stays safe",
        arguments: ["/a\0", "/a\u{7F}", "/a\r\n", "/a\u{1F}"])
    func trailingControlCharactersFromAdapter(path: String) async throws {
        let sent = try await send(AdapterFixtures.probe(adapters: [settingPath(path)]))
        #expect(sent.head.path == "/a")
        #expect(isSafeRequestTarget(sent.head.path ?? ""))
    }

    @Test("an adapter that puts raw non-ASCII bytes in the path is refused or encoded")
    func nonASCIIPathFromAdapter() async throws {
        let (client, mock) = AdapterFixtures.answeringClient()
        _ = try? await client.send(AdapterFixtures.probe(adapters: [settingPath("/caf\u{E9}")]))
        let sentPaths = mock.recordedRequests.compactMap(\.head.path)
        #expect(sentPaths.allSatisfy { $0.utf8.allSatisfy { $0 < 0x80 } })
    }

    // MARK: - Row 17: framing

    @Test("a user-set Content-Length is replaced by the body's length", arguments: ["99", "0", "11", "12, 12", "-1"])
    func wrongContentLengthReplaced(value: String) async throws {
        let sent = try await send(
            AdapterFixtures.probe(method: .post, headers: ["Content-Length": value], body: .text("hello world!")))
        #expect(sent.head.headerFields.values(named: "Content-Length") == ["12"])
        #expect(sent.body?.count == 12)
    }

    @Test("two user-set Content-Length fields become one correct one")
    func duplicateContentLength() async throws {
        var headers = RequestHeaders()
        headers.append(name: "content-length", value: "12")
        headers.append(name: "Content-Length", value: "13")
        let sent = try await send(AdapterFixtures.probe(method: .put, headers: headers, body: .text("hello world!")))
        #expect(sent.head.headerFields.values(named: "Content-Length") == ["12"])
    }

    @Test(
        "Transfer-Encoding set by the user is removed for a body of known length",
        arguments: ["chunked", "gzip, chunked", "identity"])
    func transferEncodingReplaced(value: String) async throws {
        let sent = try await send(
            AdapterFixtures.probe(method: .post, headers: ["Transfer-Encoding": value], body: .text("abc")))
        #expect(sent.head.headerFields.values(named: "Transfer-Encoding").isEmpty)
        #expect(sent.head.headerFields.values(named: "Content-Length") == ["3"])
    }

    @Test("framing headers set by a client adapter or the server are replaced too")
    func framingFromAdapterAndServer() async throws {
        let mock = MockTransport()
        mock.enqueue(.text("ok"))
        let server = Server(baseURL: Fixtures.baseURL, headers: ["Content-Length": "1000"])
        let configuration = Client.Configuration(adapters: [
            .custom("frame") { request, _ in
                var request = request
                request.head.headerFields.append(HTTPField(name: .contentLength, value: "7"))
                request.head.headerFields[.transferEncoding] = "chunked"
                return request
            }
        ])
        let client = Client(server: server, transport: mock, configuration: configuration)
        _ = try await client.send(AdapterFixtures.probe(method: .post, body: .json(["k": "v"])))
        let sent = try #require(mock.recordedRequests.first)
        #expect(sent.head.headerFields.values(named: "Content-Length") == [String(sent.body?.count ?? -1)])
        #expect(sent.head.headerFields[.transferEncoding] == nil)
    }

    @Test(
        "a body-less request has no Content-Length, even when the user set one",
        arguments: [HTTPRequest.Method.get, .head, .delete, .options, .trace])
    func noBodyNoContentLength(method: HTTPRequest.Method) async throws {
        let plain = try await send(AdapterFixtures.probe(method: method))
        #expect(plain.head.headerFields[.contentLength] == nil)
        #expect(plain.head.headerFields[.transferEncoding] == nil)
        #expect(plain.body == nil)

        let userSet = try await send(
            AdapterFixtures.probe(method: method, headers: ["Content-Length": "5", "Transfer-Encoding": "chunked"]))
        #expect(userSet.head.headerFields[.contentLength] == nil)
        #expect(userSet.head.headerFields[.transferEncoding] == nil)
    }

    @Test(
        "POST, PUT and PATCH without a body send Content-Length: 0",
        arguments: [HTTPRequest.Method.post, .put, .patch])
    func bodylessPostHasZeroLength(method: HTTPRequest.Method) async throws {
        let sent = try await send(AdapterFixtures.probe(method: method, headers: ["Content-Length": "42"]))
        #expect(sent.head.headerFields.values(named: "Content-Length") == ["0"])
        #expect(sent.body == nil)
    }

    @Test("a stream of unknown length has no Content-Length and no user-set Transfer-Encoding")
    func unknownLengthStream() async throws {
        let body = RequestBody.stream(AdapterFixtures.stream(["ab", "cde"], length: .unknown))
        let sent = try await send(
            AdapterFixtures.probe(
                method: .post, headers: ["Content-Length": "5", "Transfer-Encoding": "gzip"], body: body))
        #expect(sent.head.headerFields[.contentLength] == nil)
        #expect(sent.head.headerFields[.transferEncoding] == nil)
        #expect(sent.bodyText == "abcde")
    }

    @Test("a stream of known length has exactly that Content-Length")
    func knownLengthStream() async throws {
        let body = RequestBody.stream(AdapterFixtures.stream(["ab", "cde"], length: .known(5)))
        let sent = try await send(AdapterFixtures.probe(method: .put, headers: ["Content-Length": "9"], body: body))
        #expect(sent.head.headerFields.values(named: "Content-Length") == ["5"])
        #expect(sent.bodyText == "abcde")
    }

    @Test(
        "a stream declaring a negative length is invalidBody at validate, not a Content-Length of -1; nothing is sent")
    func negativeLengthStream() async throws {
        let body = RequestBody.stream(AdapterFixtures.stream(["ab"], length: .known(-1)))
        let error = await reject(AdapterFixtures.probe(method: .put, body: body))
        #expect(error?.code == .invalidBody)
        #expect(error?.stage == .validate)
        #expect(error?.message?.contains("negative length (-1)") == true)
    }

    @Test("Content-Length counts UTF-8 bytes, not characters")
    func contentLengthCountsBytes() async throws {
        let sent = try await send(AdapterFixtures.probe(method: .post, body: .text("é😀")))
        #expect(sent.head.headerFields.values(named: "Content-Length") == ["6"])
    }

    @Test(
        "TRACE with a body is invalidBody at the validate stage; nothing is sent",
        arguments: ["text", "empty", "stream"])
    func traceWithBody(kind: String) async throws {
        let body: RequestBody =
            switch kind {
            case "text": .text("x")
            case "empty": .bytes(Data())
            default: .stream(AdapterFixtures.stream(["x"], length: .unknown))
            }
        let error = await reject(AdapterFixtures.probe(method: .trace, body: body))
        #expect(error?.code == .invalidBody)
        #expect(error?.stage == .validate)
    }

    // MARK: - The connection's fields

    @Test(
        "a Host header naming the URL's authority is removed (the transport writes it)",
        arguments: ["api.example.com", "API.example.com", "api.example.com:443", "api.example.com."])
    func hostNamingTheAuthority(value: String) async throws {
        let recorded = try await send(AdapterFixtures.probe(headers: ["Host": value]))
        #expect(recorded.head.headerFields[HTTPField.Name("Host")!] == nil)
        #expect(recorded.head.authority == "api.example.com")
    }

    @Test(
        "a Host header naming another host or port is invalidHeader; nothing is sent",
        arguments: ["internal.example.com", "api.example.com:8443", "api.example.com:80", "127.0.0.1"])
    func hostNamingAnotherAuthority(value: String) async throws {
        let error = await reject(AdapterFixtures.probe(headers: ["Host": value]))
        #expect(error?.code == .invalidHeader)
        #expect(error?.stage == .validate)
        #expect(error?.message?.contains("'\(value)'") == true)
        #expect(error?.message?.contains("base URL") == true)
    }

    @Test(
        "Upgrade, a Connection token other than close, keep-alive or TE (with a TE field), and TE other than trailers are invalidHeader",
        arguments: [
            ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Connection", "close, X-Api-Key"),
            ("Connection", "TE"), ("TE", "gzip"), ("TE", "trailers, deflate;q=0.5"),
        ])
    func connectionFieldsRefused(name: String, value: String) async throws {
        let error = await reject(AdapterFixtures.probe(headers: [name: value]))
        #expect(error?.code == .invalidHeader)
        #expect(error?.stage == .validate)
        #expect(error?.message?.contains(name) == true, "\(error?.message ?? "")")
    }

    @Test("Connection: close, TE and TE: trailers go as set; Keep-Alive and Proxy-Connection are removed")
    func connectionFieldsKeptOrRemoved() async throws {
        let recorded = try await send(
            AdapterFixtures.probe(headers: [
                "Connection": "Close, TE", "TE": "trailers", "Keep-Alive": "timeout=5",
                "Proxy-Connection": "keep-alive", "X-Custom": "kept",
            ]))
        let fields = recorded.head.headerFields
        #expect(fields[.connection] == "Close, TE")
        #expect(fields[.te] == "trailers")
        #expect(fields[HTTPField.Name("Keep-Alive")!] == nil)
        #expect(fields[HTTPField.Name("Proxy-Connection")!] == nil)
        #expect(fields[HTTPField.Name("X-Custom")!] == "kept")
    }

    // MARK: - Row 45: cleartext

    static let allowedCleartext = [
        "http://127.0.0.1:8080", "http://127.0.0.1", "http://127.1.2.3", "http://localhost:3000", "http://LOCALHOST",
        "http://api.localhost", "http://[::1]:8080", "http://[::1]", "https://api.example.com",
        "https://127.evil.com",
    ]

    @Test("cleartext http is allowed to loopback (and https anywhere) by default", arguments: allowedCleartext)
    func cleartextAllowed(url: String) async throws {
        let sent = try await send(AdapterFixtures.probe(), baseURL: try #require(URL(string: url)))
        #expect(sent.head.scheme == URL(string: url)?.scheme?.lowercased())
        #expect(sent.head.path == "/probe")
    }

    static let refusedCleartext = [
        "http://api.example.com", "http://127.evil.com", "http://127.0.0.1.evil.com", "http://localhost.evil.com",
        "http://evil-localhost", "http://127.0.0", "http://128.0.0.1", "http://10.0.0.1", "http://0.0.0.0",
        "http://[::2]", "http://[fe80::1]", "http://api.example.com:80",
    ]

    @Test("cleartext http to a non-loopback host is invalidURL; nothing is sent", arguments: refusedCleartext)
    func cleartextRefused(url: String) async throws {
        let error = await reject(AdapterFixtures.probe(), baseURL: try #require(URL(string: url)))
        #expect(error?.code == .invalidURL)
        #expect(error?.stage == .validate)
    }

    @Test("CleartextPolicy.hosts allows the listed hosts case-insensitively, plus loopback, and nothing else")
    func cleartextHostsPolicy() async throws {
        let policy = CleartextPolicy.hosts(["Intranet.Test"])
        let configure: (inout Client.Configuration) -> Void = { $0.cleartextPolicy = policy }
        for url in ["http://intranet.test", "http://INTRANET.TEST:8080", "http://127.0.0.1:9000"] {
            let sent = try await send(
                AdapterFixtures.probe(), baseURL: try #require(URL(string: url)), configure: configure)
            #expect(sent.head.scheme == "http")
        }
        for url in ["http://other.test", "http://intranet.test.evil.com", "http://evil.intranet.test"] {
            let error = await reject(
                AdapterFixtures.probe(), baseURL: try #require(URL(string: url)), configure: configure)
            #expect(error?.code == .invalidURL, "\(url)")
        }
    }

    @Test("CleartextPolicy.never refuses even loopback; .always allows any host")
    func cleartextNeverAndAlways() async throws {
        let loopback = try #require(URL(string: "http://127.0.0.1:8080"))
        let error = await reject(AdapterFixtures.probe(), baseURL: loopback) { $0.cleartextPolicy = .never }
        #expect(error?.code == .invalidURL)
        let sent = try await send(
            AdapterFixtures.probe(), baseURL: try #require(URL(string: "http://api.example.com"))
        ) { $0.cleartextPolicy = .always }
        #expect(sent.head.authority == "api.example.com")
    }

    @Test("an adapter that moves an allowed cleartext request to another host is checked again and refused")
    func cleartextCheckedAfterAdapters() async throws {
        let loopback = try #require(URL(string: "http://127.0.0.1:8080"))
        // The base's answer (loopback: allowed) is worked out once per client; it must not cover a request an
        // adapter sends elsewhere.
        let moving = ClosureAdapter(name: "move") { request, _ in
            var request = request
            request.head.authority = "api.example.com"
            return request
        }
        let error = await reject(AdapterFixtures.probe(adapters: [moving]), baseURL: loopback)
        #expect(error?.code == .invalidURL)
        #expect(error?.stage == .validate)
        // The same authority rebuilt by an adapter keeps the base's answer.
        let rebuilding = ClosureAdapter(name: "rebuild") { request, _ in
            var request = request
            request.head.authority = "127.0.0." + "1:8080"
            return request
        }
        let sent = try await send(AdapterFixtures.probe(adapters: [rebuilding]), baseURL: loopback)
        #expect(sent.head.authority == "127.0.0.1:8080")
        // A policy that refuses the base's host refuses it however the request was adapted.
        let refused = await reject(AdapterFixtures.probe(adapters: [rebuilding]), baseURL: loopback) {
            $0.cleartextPolicy = .never
        }
        #expect(refused?.code == .invalidURL)
    }

    @Test(
        "the policy's loopback check",
        arguments: [
            ("localhost", true), ("127.0.0.1", true), ("127.255.255.254", true), ("::1", true), ("[::1]", true),
            ("127.evil.com", false), ("127.0.0.1.evil.com", false), ("localhost.evil.com", false), ("127.0.0", false),
            ("127.0.0.256", false), ("1.2.3.127", false), ("", false), ("LOCALHOST", true), ("app.localhost", true),
            ("0127.0.0.1", false), ("127..0.1", false), ("127.0.0.1.", false), ("127.0.0.1:80", false),
        ])
    func loopbackCheck(host: String, allowed: Bool) {
        #expect(CleartextPolicy.loopbackOnly.allows(host: host) == allowed)
    }

    @Test("an adapter that downgrades the scheme to http for a remote host is refused")
    func downgradeByAdapter() async throws {
        let error = await reject(
            AdapterFixtures.probe(adapters: [AdapterFixtures.retarget(scheme: "http", authority: "api.example.com")]))
        #expect(error?.code == .invalidURL)
        #expect(error?.stage == .validate)
    }

    // MARK: - Schemes

    static let refusedSchemes = [
        "ftp://api.example.com", "file:///etc/passwd", "ws://api.example.com", "wss://api.example.com",
        "http+unix://%2Ftmp%2Fsock/x", "gopher://api.example.com", "data:text/plain,hi",
    ]

    @Test("a base URL whose scheme is not http or https is invalidURL; nothing is sent", arguments: refusedSchemes)
    func refusedScheme(url: String) async throws {
        let error = await reject(AdapterFixtures.probe(), baseURL: try #require(URL(string: url)))
        #expect(error?.code == .invalidURL)
        #expect(error?.stage == .resolve)
    }

    @Test("an adapter that changes the scheme to something else is invalidURL", arguments: ["ftp", "file", "ws", ""])
    func refusedSchemeFromAdapter(scheme: String) async throws {
        let error = await reject(
            AdapterFixtures.probe(adapters: [AdapterFixtures.retarget(scheme: scheme, authority: "api.example.com")]))
        #expect(error?.code == .invalidURL)
        #expect(error?.stage == .validate)
    }

    @Test("an uppercase scheme is accepted and sent lowercase")
    func uppercaseScheme() async throws {
        let sent = try await send(
            AdapterFixtures.probe(), baseURL: try #require(URL(string: "HTTPS://api.example.com")))
        #expect(sent.head.scheme == "https")
    }
}
