import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Logging
import Testing

/// Issue #13: the default key list, URL-valued headers, inline `key=value` redaction and scrubbing by value.
@Suite("Redactor secrets and scrubbing", .timeLimit(.minutes(1)))
struct RedactorSecretsTests {
    @Test(
        "the default redactor covers the keys real APIs use, in any case",
        arguments: [
            "api-key", "apikey", "api_key", "key", "sig", "signature", "X-Amz-Signature", "X-Amz-Credential",
            "X-Amz-Security-Token", "X-Goog-Signature", "X-Goog-Credential", "session", "sessionid", "token",
            "access_token", "refresh_token", "id_token", "client_secret", "password", "APIKEY", "Key",
        ]
    )
    func defaultQueryKeys(key: String) {
        #expect(Redactor.default.isSensitive(queryKey: key))
        #expect(Redactor.default.redactPairs("\(key)=s3cret&page=2") == "\(key)=<redacted>&page=2")
    }

    @Test("ordinary keys stay visible", arguments: ["page", "limit", "q", "sort", "expires", "code"])
    func ordinaryKeys(key: String) {
        #expect(Redactor.default.redactPairs("\(key)=visible") == "\(key)=visible")
    }

    @Test("code is a secret next to an OAuth 2.0 key, in a query, a form and a JSON body")
    func oauthCode() {
        let redactor = Redactor.default
        #expect(redactor.redactPairs("code=abc123&state=xyz") == "code=<redacted>&state=xyz")
        #expect(
            redactor.redactPairs("grant_type=authorization_code&code=abc123&redirect_uri=app%3A%2F%2Fcb")
                == "grant_type=authorization_code&code=<redacted>&redirect_uri=app%3A%2F%2Fcb")
        #expect(redactor.redactPairs("code=US&page=1") == "code=US&page=1")
        let json = Data(#"{"client_id":"app","code":"abc123"}"#.utf8)
        #expect(
            redactor.excerpt(of: json, contentType: "application/json") == #"{"client_id":"app","code":"<redacted>"}"#)
    }

    @Test("Location, Content-Location, Referer and Link have their query secrets and userinfo redacted")
    func urlValuedHeaders() throws {
        let link = try #require(HTTPField.Name("Link"))
        let fields: HTTPFields = [
            .location: "https://ada:pw1234@cdn.example.com/f?sig=abcd&x=1",
            .contentLocation: "/f?X-Amz-Signature=abcd",
            .referer: "https://app.example.com/cb?code=abcd&state=s",
            link: #"<https://api.example.com/items?page=2&access_token=abcd>; rel="next""#,
            .contentType: "text/plain",
        ]
        let redacted = Redactor.default.redact(fields)
        #expect(redacted[.location] == "https://<redacted>@cdn.example.com/f?sig=<redacted>&x=1")
        #expect(redacted[.contentLocation] == "/f?X-Amz-Signature=<redacted>")
        #expect(redacted[.referer] == "https://app.example.com/cb?code=<redacted>&state=s")
        #expect(redacted[link] == #"<https://api.example.com/items?page=2&access_token=<redacted>>; rel="next""#)
        #expect(redacted[.contentType] == "text/plain")
    }

    @Test("displayURL drops userinfo and the fragment and redacts the query")
    func displayURL() throws {
        let url = try #require(URL(string: "https://ada:pw@api.example.com:8443/f?sig=abc&x=1#top"))
        #expect(Redactor.default.displayURL(url) == "https://api.example.com:8443/f?sig=<redacted>&x=1")
    }

    @Test(
        "path parameters under sensitive names are redacted, in a path, a URL and a Location",
        arguments: [
            ("/cart;jsessionid=1A2B3C4D?x=1", "/cart;jsessionid=<redacted>?x=1"),
            ("/cart;JSESSIONID=1A2B3C4D", "/cart;JSESSIONID=<redacted>"),
            (
                "/a;v=1;jsessionid=1A2B3C4D/b;token=t0k3n;page=2",
                "/a;v=1;jsessionid=<redacted>/b;token=<redacted>;page=2"
            ),
            (
                "https://shop.example.com/cart;jsessionid=1A2B3C4D#top",
                "https://shop.example.com/cart;jsessionid=<redacted>#top"
            ),
            ("/a;b/c;page=2;matrix", "/a;b/c;page=2;matrix"),
            ("/files/report;v=2.pdf?sig=abcd", "/files/report;v=2.pdf?sig=<redacted>"),
        ]
    )
    func pathParameters(path: String, redacted: String) throws {
        let redactor = Redactor.default
        #expect(redactor.redactQuery(inPath: path) == redacted)
        let fields: HTTPFields = [.location: path]
        #expect(redactor.redact(fields)[.location] == redacted)
        let url = try #require(URL(string: "https://shop.example.com/cart;jsessionid=1A2B3C4D?page=2"))
        #expect(redactor.displayURL(url) == "https://shop.example.com/cart;jsessionid=<redacted>?page=2")
    }

    @Test("a path parameter's session is among the request's secrets, scrubbed from a transport's message")
    func pathParameterSecret() {
        let request = HTTPRequest(
            method: .get, scheme: "https", authority: "shop.example.com", path: "/cart;jsessionid=1A2B3C4D?page=2")
        let redactor = Redactor.default
        let secrets = redactor.secrets(of: request)
        #expect(secrets.values == ["1A2B3C4D"])
        #expect(
            redactor.scrub("could not connect to https://shop.example.com/cart;jsessionid=1A2B3C4D", secrets: secrets)
                == "could not connect to https://shop.example.com/cart;jsessionid=<redacted>")
    }

    @Test("key=value pairs under sensitive keys are redacted wherever they appear in text")
    func inlinePairs() {
        let redactor = Redactor.default
        #expect(
            redactor.redactInlinePairs("no route for GET /v1/files?api-key=abc&page=2 (try again)")
                == "no route for GET /v1/files?api-key=<redacted>&page=2 (try again)")
        #expect(
            redactor.redactInlinePairs(#"NSErrorFailingURLKey=https://h/p?token=t0k, other="sig=s1g""#)
                == #"NSErrorFailingURLKey=https://h/p?token=<redacted>, other="sig=<redacted>""#)
        #expect(redactor.redactInlinePairs("a == b, page=2") == "a == b, page=2")
        #expect(
            redactor.redactInlinePairs("user[password]=pw&user[name]=ada") == "user[password]=<redacted>&user[name]=ada"
        )
    }

    @Test("the secrets of a request: header values, bearer and basic credentials, cookies, query values, userinfo")
    func secretsOfRequest() throws {
        var redactor = Redactor.default
        let tenant = try #require(HTTPField.Name("X-Tenant"))
        redactor.sensitiveHeaderNames.insert(tenant)
        var request = HTTPRequest(
            method: .get, scheme: "https", authority: "ada:pa55word@api.example.com",
            path: "/p?key=k%2Fey%2B1&page=22222")
        request.headerFields[.authorization] = "Bearer b3arer-token"
        request.headerFields[.proxyAuthorization] = "Basic " + Data("proxy:pr0xy-pass".utf8).base64EncodedString()
        request.headerFields[.cookie] = "session=c00kie-1; theme=dark-mode"
        request.headerFields[tenant] = "t3nant"
        let secrets = redactor.secrets(of: request)
        for value in [
            "Bearer b3arer-token", "b3arer-token", "pr0xy-pass", "proxy:pr0xy-pass", "c00kie-1", "dark-mode", "t3nant",
            "k%2Fey%2B1", "ada:pa55word", "pa55word",
        ] {
            #expect(secrets.values.contains(value), "\(value) not collected")
        }
        #expect(!secrets.values.contains("22222"))
        #expect(!secrets.values.contains("Bearer"))
    }

    @Test("scrubbing replaces a secret as written, percent-encoded either way, form-encoded and JSON-escaped")
    func scrubForms() {
        var secrets = Redactor.Secrets()
        secrets.insert("a/b c+d")
        for form in ["a/b c+d", "a%2Fb%20c%2Bd", "a%2fb%20c%2bd", "a%2Fb+c%2Bd", #"a\/b c+d"#] {
            #expect(secrets.scrub("x \(form) y") == "x <redacted> y", "\(form)")
        }
        secrets.insert("abc")
        #expect(secrets.scrub("abc") == "abc", "a value under the minimum length is not scrubbed from free text")
    }

    @Test("a CourierError built by hand still prints its underlying error scrubbed of its request's secrets")
    func handBuiltError() {
        struct Leaky: Error, CustomStringConvertible {
            var description: String { "failed: https://api.example.com/p?api-key=k3y-value (Bearer b3arer-token)" }
        }
        var request = HTTPRequest(
            method: .get, scheme: "https", authority: "api.example.com", path: "/p?api-key=k3y-value")
        request.headerFields[.authorization] = "Bearer b3arer-token"
        let error = CourierError(code: .transportFailed, stage: .transport, request: request, underlyingError: Leaky())
        #expect(!error.description.contains("k3y-value"), "\(error)")
        #expect(!error.description.contains("b3arer-token"), "\(error)")
        #expect(error.description.contains("GET https://api.example.com/p?api-key=<redacted>"))
    }

    @Test("a scrubbing logger scrubs the message, every metadata value and the error, and keeps the level")
    func scrubbingLogger() {
        struct Head: CustomStringConvertible {
            var description: String { "302 Found, Location: /next?sig=l0cation-sig; Authorization: Bearer b3arer" }
        }
        struct Failure: Error, CustomStringConvertible {
            var description: String { "failed https://api.example.com/p?key=k3y-value" }
        }
        var request = HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/p?key=k3y-value")
        request.headerFields[.authorization] = "Bearer b3arer"
        let lines = DecisionFixtures.Shared<[String]>([])
        var base = Logger(label: "scrubbing") { _ in LineHandler(lines: lines) }
        base.logLevel = .trace
        let redactor = Redactor.default
        var logger = redactor.scrubbing(base, secrets: redactor.secrets(of: request))
        #expect(logger.logLevel == .trace)
        logger[metadataKey: "request"] = "GET /p?key=k3y-value"
        logger.trace(
            "response part received for /p?key=k3y-value",
            metadata: ["part": .stringConvertible(Head()), "nested": ["list": ["Bearer b3arer"]]])
        logger.error("send failed", error: Failure())
        let text = lines.value.joined(separator: "\n")
        #expect(lines.value.count == 2)
        for secret in ["k3y-value", "b3arer", "l0cation-sig"] {
            #expect(!text.contains(secret), "\(secret) leaked: \(text)")
        }
        #expect(text.contains("response part received for /p?key=<redacted>"))
    }

    /// A privacy marker in swift-log's metadata attributes (SLG-0004).
    enum Privacy: Int64, Logger.MetadataValueAttributes.Attribute { case `private` = 1 }

    /// Keeps each event's metadata as it reaches the handler.
    struct MetadataHandler: LogHandler {
        let seen: DecisionFixtures.Shared<[Logger.Metadata]>
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) { seen.update { $0.append(event.metadata ?? [:]) } }
    }

    @Test("a scrubbing logger keeps a metadata value's attributes (a privacy marker) as it scrubs the value")
    func scrubbingKeepsAttributes() {
        let seen = DecisionFixtures.Shared<[Logger.Metadata]>([])
        let base = Logger(label: "attributes") { _ in MetadataHandler(seen: seen) }
        var request = HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/p")
        request.headerFields[.authorization] = "Bearer b3arer"
        let redactor = Redactor.default
        let logger = redactor.scrubbing(base, secrets: redactor.secrets(of: request))
        var marked = Logger.MetadataValueAttributes()
        marked[Privacy.self] = .private
        logger.info(
            "signed in",
            metadata: [
                "user": .attributed("ada@example.com", attributes: marked),
                "token": .attributed("Bearer b3arer", attributes: marked), "plain": .stringConvertible(42),
            ])
        let metadata = seen.value.first ?? [:]
        #expect(metadata["user"]?.attributes[Privacy.self] == .private)
        #expect(metadata["user"]?.description == "ada@example.com")
        #expect(metadata["token"]?.attributes[Privacy.self] == .private)
        #expect(metadata["token"]?.description.contains("b3arer") == false)
        #expect(metadata["plain"]?.attributes[Privacy.self] == nil)
        #expect(metadata["plain"]?.description == "42")
    }

    /// Keeps each event as one line: message, metadata (the handler's and the event's) and error.
    struct LineHandler: LogHandler {
        let lines: DecisionFixtures.Shared<[String]>
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
            let line = "\(event.message) \(merged) \(event.error.map { "\($0)" } ?? "")"
            lines.update { $0.append(line) }
        }
    }
}

/// Secrets at the edges: cut in two by the body excerpt, and under camelCase keys.
@Suite("Redactor: secrets cut short or spelled otherwise", .timeLimit(.minutes(1)))
struct RedactorEdgeTests {
    static let token = "PLANTED-bearer-0123456789abcdef"

    @Test("a token the 1 KiB excerpt cuts through leaves none of its characters in the error", arguments: [6, 12, 20])
    func tokenCutByTheExcerpt(kept: Int) async throws {
        let (client, mock) = Fixtures.client { $0.adapters.append(.bearer { Self.token }) }
        // An error page echoing the request's headers, the token starting `kept` characters before byte 1024.
        let prefix = String(repeating: "x", count: 1024 - kept)
        mock.stub(.get, "/probe", with: .text(prefix + Self.token + " and more", status: 400))

        let error = try #require(await expectCourierError { try await client.send(Probe()) })

        let excerpt = try #require(error.bodyExcerpt)
        #expect(!excerpt.contains("PLANTED"), "\(excerpt.suffix(40))")
        #expect(excerpt.hasSuffix(Redactor.placeholder))
    }

    @Test(
        "camelCase and PascalCase spellings of sensitive keys are sensitive",
        arguments: [
            "accessToken", "AccessToken", "refreshToken", "IdToken", "clientSecret", "sessionId",
        ])
    func camelCaseKeys(key: String) async throws {
        #expect(Redactor.default.isSensitive(queryKey: key))
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .json(raw: #"{"\#(key)":"PLANTED-\#(key)","name":"ada"}"#, status: 400))
        let error = try #require(await expectCourierError { try await client.send(Probe()) })
        let excerpt = try #require(error.bodyExcerpt)
        #expect(!excerpt.contains("PLANTED"), "\(excerpt)")
        #expect(excerpt.contains("ada"))
        #expect(!Redactor.default.isSensitive(queryKey: "name"))
    }
}
