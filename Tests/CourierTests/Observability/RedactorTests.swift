import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Logging
import Testing

/// reliability.md row 46: secrets never reach logs, errors or cURL descriptions.
@Suite("Redactor", .timeLimit(.minutes(1)))
struct RedactorTests {
    /// The secrets of the row 46 scenario.
    private static let secrets = ["s3cret-token", "c00kie", "q-secret", "hunter2", "r-secret", "set-c00kie"]

    /// Every place a secret could show up, for one failed call.
    private struct Outputs {
        var logLines: [String]
        var error: CourierError
        var cURL: String

        var texts: [(place: String, text: String)] {
            logLines.map { ("log line", $0) } + [
                ("error.description", error.description),
                ("String(describing: error)", String(describing: error)),
                ("error.message", error.message ?? ""),
                ("String(describing: error.request)", String(describing: error.request)),
                ("String(reflecting: error.request)", String(reflecting: error.request)),
                ("error.request header fields", "\(error.request?.headerFields.map { "\($0)" } ?? [])"),
                ("error.bodyExcerpt", error.bodyExcerpt ?? ""),
                ("cURLDescription()", cURL),
            ]
        }
    }

    /// A login POST carrying every kind of secret, answered 401 with a refresh token in the body.
    private static func failedLogin(
        configure: (inout Client.Configuration) -> Void = { _ in }
    ) async throws -> (Outputs, MockTransport) {
        let capture = DecisionFixtures.LogCapture()
        let (client, mock) = Fixtures.client {
            $0.logger = capture.logger(level: .trace)
            $0.adapters = [.bearer { "s3cret-token" }, UserAgentAdapter.courier]
            configure(&$0)
        }
        mock.stub(
            .post, "/login",
            with: .json(
                raw: #"{"refresh_token":"r-secret","error":"invalid_grant"}"#,
                status: 401,
                headerFields: [.setCookie: "session=set-c00kie; HttpOnly"]
            )
        )
        var probe = Probe(method: .post, path: "/login")
        probe.headers = ["Cookie": "session=c00kie"]
        probe.query = ["access_token": "q-secret", "page": 1]
        probe.body = .form(["user": "ada", "password": "hunter2"])
        let error = try #require(await expectCourierError { try await client.send(probe) })
        let sent = try #require(mock.recordedRequests.first)
        let outgoing = OutgoingRequest(head: sent.head, body: sent.body.map { MessageBody($0) })
        return (Outputs(logLines: capture.allText, error: error, cURL: outgoing.cURLDescription()), mock)
    }

    @Test("the secrets really went on the wire (so the redaction checks below mean something)")
    func secretsWereSent() async throws {
        let (_, mock) = try await Self.failedLogin()
        let sent = try #require(mock.recordedRequests.first)
        #expect(sent.head.headerFields[.authorization] == "Bearer s3cret-token")
        #expect(sent.head.headerFields[.cookie] == "session=c00kie")
        #expect(sent.query?.contains("access_token=q-secret") == true)
        #expect(sent.bodyText?.contains("password=hunter2") == true)
    }

    @Test("no secret appears in logs, error description, error request, body excerpt or cURL", arguments: secrets)
    func noSecretAnywhere(secret: String) async throws {
        let (outputs, _) = try await Self.failedLogin()
        #expect(!outputs.logLines.isEmpty)
        for (place, text) in outputs.texts {
            #expect(!text.contains(secret), "\(secret) leaked in \(place): \(text)")
        }
    }

    @Test("the redacted outputs still say what happened")
    func redactedOutputsStayUseful() async throws {
        let (outputs, _) = try await Self.failedLogin()
        #expect(outputs.error.code == .unacceptableStatus)
        #expect(outputs.error.request?.headerFields[.authorization] == Redactor.placeholder)
        #expect(outputs.error.request?.headerFields[.cookie] == Redactor.placeholder)
        #expect(outputs.error.request?.path == "/login?access_token=<redacted>&page=1")
        #expect(outputs.error.bodyExcerpt == #"{"error":"invalid_grant","refresh_token":"<redacted>"}"#)
        #expect(outputs.cURL.contains("password=<redacted>"))
        #expect(outputs.cURL.contains("user=ada"))
        #expect(outputs.cURL.contains("'Authorization: <redacted>'"))
        #expect(outputs.cURL.hasPrefix("curl -X POST 'https://api.example.com/login?access_token=<redacted>&page=1'"))
        let line = try #require(outputs.logLines.first { $0.contains("POST https://api.example.com/login") })
        #expect(line.contains("access_token=<redacted>"))
    }

    @Test("a session in a path parameter (;jsessionid=) reaches no log line, error or cURL, and still goes out")
    func pathParameterSession() async throws {
        let capture = DecisionFixtures.LogCapture()
        let (client, mock) = Fixtures.client { $0.logger = capture.logger(level: .trace) }
        mock.stub(.get, "/cart;jsessionid=1A2B3C4D5E", with: .json(raw: #"{"error":"gone"}"#, status: 410))
        let error = try #require(
            await expectCourierError { try await client.send(Probe(path: "/cart;jsessionid=1A2B3C4D5E")) })
        let sent = try #require(mock.recordedRequests.first)
        #expect(sent.head.path == "/cart;jsessionid=1A2B3C4D5E")
        let outgoing = OutgoingRequest(head: sent.head, body: nil)
        let outputs = Outputs(logLines: capture.allText, error: error, cURL: outgoing.cURLDescription())
        #expect(!outputs.logLines.isEmpty)
        for (place, text) in outputs.texts {
            #expect(!text.contains("1A2B3C4D5E"), "the session leaked in \(place): \(text)")
        }
        #expect(error.request?.path == "/cart;jsessionid=<redacted>")
        #expect(outputs.cURL.contains("/cart;jsessionid=<redacted>"))
    }

    @Test("a user-registered header and query key are redacted in the error and the log line")
    func userRegisteredKeysThroughClient() async throws {
        var redactor = Redactor.default
        redactor.sensitiveHeaderNames.insert(HTTPField.Name("X-Session-Key")!)
        redactor.sensitiveQueryKeys.insert("Signature")
        let capture = DecisionFixtures.LogCapture()
        let (client, mock) = Fixtures.client {
            $0.redactor = redactor
            $0.logger = capture.logger()
        }
        mock.stub(.get, "/files") { _ in .status(403) }
        var probe = Probe(path: "/files")
        probe.query = ["signature": "sig-value", "expires": 60]
        probe.headers = ["X-Session-Key": "session-key-value", "X-Api-Key": "api-key-value"]
        let error = try #require(await expectCourierError { try await client.send(probe) })
        let texts = capture.allText + [error.description, String(describing: error.request)]
        for secret in ["sig-value", "session-key-value", "api-key-value"] {
            #expect(texts.allSatisfy { !$0.contains(secret) }, "\(secret) leaked")
        }
        #expect(error.request?.headerFields[HTTPField.Name("X-Session-Key")!] == Redactor.placeholder)
        #expect(error.request?.headerFields[HTTPField.Name("X-Api-Key")!] == Redactor.placeholder)
        #expect(error.request?.path == "/files?expires=60&signature=<redacted>")
        #expect(mock.recordedRequests.first?.query == "expires=60&signature=sig-value")
    }

    @Test("registering X-Api-Key and signature on an empty redactor redacts them, and only them")
    func registration() {
        var redactor = Redactor(sensitiveHeaderNames: [], sensitiveQueryKeys: [], sensitiveKeyWords: [])
        let apiKey = HTTPField.Name("X-Api-Key")!
        let fields: HTTPFields = [apiKey: "k-123", .accept: "application/json"]
        #expect(redactor.redact(fields)[apiKey] == "k-123")
        #expect(redactor.redactQuery(inPath: "/p?signature=abc&x=1") == "/p?signature=abc&x=1")

        redactor.sensitiveHeaderNames.insert(apiKey)
        redactor.sensitiveQueryKeys.insert("SIGNATURE")
        #expect(redactor.isSensitive(apiKey))
        #expect(redactor.isSensitive(HTTPField.Name("x-api-key")!))
        #expect(redactor.isSensitive(queryKey: "Signature"))
        let redacted = redactor.redact(fields)
        #expect(redacted[apiKey] == Redactor.placeholder)
        #expect(redacted[.accept] == "application/json")
        #expect(redactor.redactQuery(inPath: "/p?signature=abc&x=1") == "/p?signature=<redacted>&x=1")
    }

    @Test("the default redactor covers the row 46 headers and keys")
    func defaults() {
        let redactor = Redactor.default
        for name in [
            HTTPField.Name.authorization, .proxyAuthorization, .cookie, .setCookie, HTTPField.Name("X-Api-Key")!,
        ] {
            #expect(redactor.isSensitive(name), "\(name)")
        }
        for key in ["access_token", "refresh_token", "client_secret", "id_token", "password", "ACCESS_TOKEN"] {
            #expect(redactor.isSensitive(queryKey: key), "\(key)")
        }
        #expect(!redactor.isSensitive(queryKey: "page"))
        #expect(!redactor.isSensitive(.accept))
    }

    @Test("form pairs: percent-encoded and bracketed array keys are redacted, others kept")
    func pairs() {
        let redactor = Redactor.default
        #expect(redactor.redactPairs("a=1&password=x&b=2") == "a=1&password=<redacted>&b=2")
        #expect(redactor.redactPairs("access%5Ftoken=x") == "access%5Ftoken=<redacted>")
        #expect(redactor.redactPairs("token[]=x&token[]=y") == "token[]=<redacted>&token[]=<redacted>")
        #expect(redactor.redactPairs("flag&password") == "flag&password")
    }

    @Test("a secret under a nested form key (user[password]) is redacted too")
    func nestedFormKey() async throws {
        let redactor = Redactor.default
        let encoded = "user%5Bname%5D=ada&user%5Bpassword%5D=hunter2"
        #expect(!redactor.redactPairs(encoded).contains("hunter2"))
        #expect(!redactor.redactPairs("credentials[client_secret]=cs-1").contains("cs-1"))
        let (client, mock) = Fixtures.client()
        mock.stub(.post, "/signup") { _ in .status(400) }
        var probe = Probe(method: .post, path: "/signup")
        probe.body = .form(["user": ["name": "ada", "password": "hunter2"]])
        _ = await expectCourierError { try await client.send(probe) }
        let sent = try #require(mock.recordedRequests.first)
        #expect(sent.bodyText == encoded)
        let cURL = OutgoingRequest(head: sent.head, body: sent.body.map { MessageBody($0) }).cURLDescription()
        #expect(!cURL.contains("hunter2"))
    }

    @Test("JSON bodies are redacted at any depth in excerpts and cURL")
    func jsonBodies() {
        let redactor = Redactor.default
        let body = Data(#"{"user":{"name":"ada","password":"hunter2"},"tokens":[{"id_token":"i-1"}]}"#.utf8)
        let excerpt = redactor.excerpt(of: body, contentType: "application/json")
        #expect(excerpt == #"{"tokens":[{"id_token":"<redacted>"}],"user":{"name":"ada","password":"<redacted>"}}"#)
        var head = HTTPRequest(method: .post, scheme: "https", authority: "api.example.com", path: "/users")
        head.headerFields[.contentType] = "application/json"
        let cURL = OutgoingRequest(head: head, body: MessageBody(body)).cURLDescription()
        #expect(!cURL.contains("hunter2"))
        #expect(!cURL.contains("i-1"))
        #expect(cURL.contains("ada"))
    }

    @Test("JSON string values: a URL's ?token= and JSON held as a string are redacted in excerpts, cURL and secrets")
    func secretsInsideJSONStrings() throws {
        let redactor = Redactor.default
        let body = Data(
            #"{"callback_url":"https://h.example/cb?token=s3cr3t-1&x=1","name":"ada","payload":"{\"password\":\"hunter2\"}"}"#
                .utf8)
        let excerpt = redactor.excerpt(of: body, contentType: "application/json")
        #expect(!excerpt.contains("s3cr3t-1"))
        #expect(!excerpt.contains("hunter2"))
        #expect(excerpt.contains("ada"))
        var head = HTTPRequest(method: .post, scheme: "https", authority: "api.example.com", path: "/hooks")
        head.headerFields[.contentType] = "application/json"
        let cURL = OutgoingRequest(head: head, body: MessageBody(body)).cURLDescription()
        #expect(!cURL.contains("s3cr3t-1"))
        #expect(!cURL.contains("hunter2"))
        let secrets = redactor.secrets(inBody: body, contentType: "application/json")
        #expect(secrets.scrub("echo: s3cr3t-1, hunter2") == "echo: <redacted>, <redacted>")
    }

    @Test(
        "a key with a sensitive word anywhere in it is redacted; max_tokens, sort_key and page are not",
        arguments: [
            ("user%5Bpassword_confirmation%5D", true), ("current_password", true), ("newPassword", true),
            ("api_token", true), ("oauth_token_secret", true), ("private_key", true), ("AWSAccessKeyId", true),
            ("device_code", true), ("X-Amz-Credential", true), ("clientSecret", true), ("max_tokens", false),
            ("sort_key", false), ("page", false), ("input_tokens", false), ("keyword", false), ("password1", true),
            ("apiKey2", true), ("token_type", false), ("token_type_hint", false), ("pageToken", false),
            ("NextToken", false), ("continuation-token", false), ("password_policy", false),
            ("token_endpoint", false), ("client_secret_expires_at", false), ("oauth2_token", true),
        ])
    func wordsInKeys(key: String, redacted: Bool) {
        let line = Redactor.default.redactPairs("\(key)=hunter2&page=1")
        #expect(line.contains("hunter2") == !redacted, "\(line)")
        #expect(line.hasSuffix("&page=1"))
    }

    @Test("a header with a sensitive word in its name is redacted; Idempotency-Key and Sec-WebSocket-Key are not")
    func wordsInHeaderNames() throws {
        var fields = HTTPFields()
        for name in [
            "apikey", "X-Auth-Key", "X-Shopify-Access-Token", "X-Vault-Token", "Idempotency-Key", "Sec-WebSocket-Key",
            "Access-Control-Allow-Credentials",
        ] {
            fields.append(HTTPField(name: try #require(HTTPField.Name(name)), value: "v-\(name)"))
        }
        let redacted = Redactor.default.redact(fields)
        #expect(
            redacted.map(\.value) == [
                Redactor.placeholder, Redactor.placeholder, Redactor.placeholder, Redactor.placeholder,
                "v-Idempotency-Key", "v-Sec-WebSocket-Key", "v-Access-Control-Allow-Credentials",
            ])
    }

    @Test("a word removed from sensitiveKeyWords no longer redacts; the listed keys still do")
    func removingAWord() {
        var redactor = Redactor.default
        redactor.sensitiveKeyWords.remove("token")
        #expect(
            redactor.redactPairs("api_token=a1&page_token=p2&access_token=t3")
                == "api_token=a1&page_token=p2&access_token=<redacted>")
    }

    @Test("cURL quotes a method a shell would run (a token may hold ` and $), and leaves a plain one bare")
    func cURLQuotesAnOddMethod() throws {
        let odd = try #require(HTTPRequest.Method("X`id`"))
        let head = HTTPRequest(method: odd, scheme: "https", authority: "api.example.com", path: "/p")
        #expect(OutgoingRequest(head: head).cURLDescription() == "curl -X 'X`id`' 'https://api.example.com/p'")
        let purge = HTTPRequest(
            method: HTTPRequest.Method("PURGE")!, scheme: "https", authority: "a.example", path: "/")
        #expect(OutgoingRequest(head: purge).cURLDescription() == "curl -X PURGE 'https://a.example/'")
    }

    @Test("a URL with userinfo set by an adapter never appears in the error or the log")
    func userinfoNeverAppears() async throws {
        let capture = DecisionFixtures.LogCapture()
        let (client, mock) = Fixtures.client { $0.logger = capture.logger() }
        var probe = Probe()
        probe.extraAdapters = [
            .custom("userinfo") { request, _ in
                var request = request
                request.head.authority = "ada:pa55word@api.example.com"
                return request
            }
        ]
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect(error.code == .invalidURL)
        #expect(mock.recordedRequests.isEmpty)
        let head = HTTPRequest(method: .get, scheme: "https", authority: "ada:pa55word@api.example.com", path: "/p")
        let cURL = OutgoingRequest(head: head).cURLDescription()
        for text in capture.allText + [error.description, String(describing: error.request), cURL] {
            #expect(!text.contains("pa55word"), "\(text)")
        }
    }
}
