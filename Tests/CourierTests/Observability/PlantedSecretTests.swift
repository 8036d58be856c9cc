import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Logging
import Testing

/// Issue #13 and reliability.md row 46: one distinct secret planted in every position a request and its response
/// can carry one, every failure path `MockTransport` can reach driven, and every string Courier produces searched.
///
/// Every planted secret starts with ``marker``, so a test finds a leak in any form: as written, percent-encoded,
/// cut short.
@Suite("Planted secrets", .timeLimit(.minutes(1)))
struct PlantedSecretTests {
    /// The prefix of every planted secret; no string Courier produces may contain it.
    static let marker = "PLANTED"

    static let apiKey = "PLANTED-api-key-a1"
    /// With `/` and `+`, which the query encoder percent-encodes: the leak would be in encoded form.
    static let googleKey = "PLANTED/google+key-b2"
    static let signature = "PLANTED-signature-c3"
    static let amzSignature = "PLANTED-amz-signature-d4"
    static let tenantQuery = "PLANTED-tenant-query-e5"
    static let bearer = "PLANTED-bearer-f6"
    static let tenantHeader = "PLANTED-tenant-header-g7"
    static let formPassword = "PLANTED-form-password-h8"
    static let jsonClientSecret = "PLANTED-json-client-secret-i9"
    static let locationSecret = "PLANTED-location-j10"
    static let accessToken = "PLANTED-access-token-k11"
    static let refreshToken = "PLANTED-refresh-token-l12"
    static let cookie = "PLANTED-set-cookie-m13"
    static let userinfo = "PLANTED-userinfo-n14"

    static let tenantHeaderName = HTTPField.Name("X-Tenant-Secret")!

    /// A request with a secret in each query position, a user-registered header and a body.
    struct Planted<Response: Sendable>: Request {
        var method: HTTPRequest.Method = .post
        var path = "/probe"
        var query: Parameters? = [
            "api-key": PlantedSecretTests.apiKey, "key": PlantedSecretTests.googleKey,
            "signature": PlantedSecretTests.signature, "X-Amz-Signature": PlantedSecretTests.amzSignature,
            "tenant_token": PlantedSecretTests.tenantQuery, "page": 2,
        ]
        var headers: RequestHeaders = ["X-Tenant-Secret": PlantedSecretTests.tenantHeader]
        var body: RequestBody?
        var cachePolicy: CachePolicy = .useProtocolRules
        var timeout: Duration?
        var parser: any ResponseParser<Response>
    }

    /// An OAuth 2.0 token response whose decoding rejects the token and, as hand-written decoders do, names it.
    struct StrictToken: Decodable, Sendable {
        let accessToken: String

        enum CodingKeys: String, CodingKey { case accessToken = "access_token" }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            accessToken = try container.decode(String.self, forKey: .accessToken)
            guard accessToken.hasPrefix("ey") else {
                throw DecodingError.dataCorruptedError(
                    forKey: .accessToken, in: container, debugDescription: "'\(accessToken)' is not a JWT")
            }
        }
    }

    /// A transport error whose description names the whole URL and the credentials, as some do.
    struct LeakyTransportError: Error, CustomStringConvertible {
        let description: String
    }

    /// The body kinds a secret is planted in.
    enum BodyKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case form
        case json

        var testDescription: String { rawValue }

        var body: RequestBody {
            switch self {
            case .form: .form(["user": "ada", "password": PlantedSecretTests.formPassword])
            case .json: .json(["user": "ada", "client_secret": PlantedSecretTests.jsonClientSecret])
            }
        }
    }

    /// Every path through Courier `MockTransport` can reach.
    enum Scenario: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case transportErrorNamingURL
        case urlError
        case unstubbedRequest
        case redirectLoop
        case redirectToHTTP
        case redirectToOtherScheme
        case redirectWithUserinfo
        case redirectWithFragmentToken
        case redirectSchemeRelativeUserinfo
        case redirectLimit
        case unacceptableStatusEchoingText
        case unacceptableStatusEchoingJSON
        case decodingFailure
        case cacheMiss
        case tooManyRestarts
        case timedOut
        case success

        var testDescription: String { rawValue }

        /// The code the call fails with, or `nil` when it succeeds.
        var expectedCode: CourierError.Code? {
            switch self {
            case .transportErrorNamingURL, .urlError: .transportFailed
            case .unstubbedRequest: .unexpectedResponse
            case .redirectLoop: .redirectCycle
            case .redirectToHTTP: .insecureRedirect
            case .redirectToOtherScheme, .redirectWithUserinfo, .redirectWithFragmentToken,
                .redirectSchemeRelativeUserinfo:
                .invalidRedirect
            case .redirectLimit: .redirectLimit
            case .unacceptableStatusEchoingText, .unacceptableStatusEchoingJSON: .unacceptableStatus
            case .decodingFailure: .decodingFailed
            case .cacheMiss: .cacheMiss
            case .tooManyRestarts: .tooManyRestarts
            case .timedOut: .timedOut
            case .success: nil
            }
        }
    }

    /// Every string Courier produced for one call, with where it came from.
    struct Outputs {
        var texts: [(place: String, text: String)] = []
        var error: CourierError?
        var recorded: [MockTransport.RecordedRequest] = []

        mutating func add(_ place: String, _ text: String?) {
            if let text { texts.append((place, text)) }
        }
    }

    /// The echo of a request a careless server sends back: the whole URL and the credentials.
    static func echo(of request: MockTransport.RecordedRequest) -> String {
        let url = request.head.url?.absoluteString ?? ""
        let authorization = request.head.headerFields[.authorization] ?? ""
        let tenant = request.head.headerFields[tenantHeaderName] ?? ""
        return "\(request.head.method) \(url) with Authorization: \(authorization), X-Tenant-Secret: \(tenant)"
    }

    static let tokenJSON =
        #"{"access_token":"\#(accessToken)","refresh_token":"\#(refreshToken)","token_type":"Bearer","expires_in":3600}"#

    /// Drives `scenario` with `body` and returns every string Courier produced.
    static func run(_ scenario: Scenario, body: BodyKind) async throws -> Outputs {
        var redactor = Redactor.default
        redactor.sensitiveHeaderNames.insert(tenantHeaderName)
        redactor.sensitiveQueryKeys.insert("tenant_token")
        let capture = DecisionFixtures.LogCapture()
        let monitor = MonitorFixtures.RecordingMonitor()
        var decisions: [any Decision] = [RedirectDecision()]
        if scenario == .redirectLimit { decisions = [RedirectDecision(maxRedirects: 1)] }
        let cache = scenario == .cacheMiss ? try HTTPCache(storage: .memory(byteLimit: 1 << 20)) : nil
        var configuration = Client.Configuration(
            adapters: [.bearer { bearer }, UserAgentAdapter.courier],
            decisions: decisions,
            retryPolicy: .disabled,
            maxRestarts: scenario == .tooManyRestarts ? 1 : 20,
            redactor: redactor,
            logger: capture.logger(level: .trace),
            monitors: [monitor]
        )
        configuration.cache = cache
        let mock = MockTransport()
        let client = Client(server: Fixtures.server, transport: mock, configuration: configuration)

        var request = Planted<String>(body: body.body, parser: StringParser())
        let location = "sig=\(locationSecret)&tenant_token=\(locationSecret)"
        let setCookie: HTTPFields = [.setCookie: "session=\(cookie); HttpOnly"]
        switch scenario {
        case .transportErrorNamingURL:
            mock.stub(.post, "/probe") { recorded in throw LeakyTransportError(description: echo(of: recorded)) }
        case .urlError:
            mock.stub(.post, "/probe") { recorded in
                guard let url = recorded.head.url else { throw LeakyTransportError(description: "no URL") }
                throw URLError(
                    .cannotConnectToHost,
                    userInfo: [
                        NSURLErrorFailingURLErrorKey: url,
                        NSLocalizedDescriptionKey: "Could not connect to \(url.absoluteString)",
                    ])
            }
        case .unstubbedRequest:
            break
        case .redirectLoop:
            mock.stub(.post, "/probe", with: .status(302, headerFields: [.location: "/hop?\(location)"]))
            mock.stub(.get, "/hop") { _ in .status(302, headerFields: [.location: "/hop?\(location)"]) }
        case .redirectToHTTP:
            mock.stub(
                .post, "/probe",
                with: .status(302, headerFields: [.location: "http://api.example.com/next?\(location)"]))
        case .redirectToOtherScheme:
            mock.stub(
                .post, "/probe",
                with: .status(302, headerFields: [.location: "ftp://ada:\(userinfo)@files.example.com/x?\(location)"])
            )
        case .redirectWithUserinfo:
            mock.stub(
                .post, "/probe",
                with: .status(302, headerFields: [.location: "https://ada:\(userinfo)@b.example.com/x?\(location)"])
            )
        case .redirectWithFragmentToken:
            // An OAuth implicit-flow answer: the token in the fragment of a URL for the app.
            mock.stub(
                .post, "/probe",
                with: .status(302, headerFields: [.location: "myapp://cb#access_token=\(accessToken)&state=x"]))
        case .redirectSchemeRelativeUserinfo:
            mock.stub(
                .post, "/probe", with: .status(302, headerFields: [.location: "//ada:\(userinfo)@b.example.com/x"]))
        case .redirectLimit, .tooManyRestarts:
            mock.stub(.post, "/probe", with: .status(302, headerFields: [.location: "/r1?\(location)"]))
            mock.stub(.get, "/r1", with: .status(302, headerFields: [.location: "/r2?\(location)"]))
            mock.stub(.get, "/r2", with: .status(302, headerFields: [.location: "/r3?\(location)"]))
        case .unacceptableStatusEchoingText:
            mock.stub(.post, "/probe") { recorded in
                .text("no route for \(echo(of: recorded))", status: 404, headerFields: setCookie)
            }
        case .unacceptableStatusEchoingJSON:
            mock.stub(.post, "/probe") { recorded in
                let echoed = echo(of: recorded).replacingOccurrences(of: "\"", with: "'")
                return .json(
                    raw: #"{"access_token":"\#(accessToken)","refresh_token":"\#(refreshToken)","echo":"\#(echoed)"}"#,
                    status: 401, headerFields: setCookie)
            }
        case .decodingFailure:
            mock.stub(.post, "/probe", with: .json(raw: tokenJSON, headerFields: setCookie))
        case .cacheMiss:
            request.method = .get
            request.body = nil
            request.cachePolicy = .cacheOnly
        case .timedOut:
            request.timeout = .milliseconds(50)
            mock.stub(.post, "/probe", with: MockResponse(fault: .stall))
        case .success:
            mock.stub(.post, "/probe", with: .json(raw: tokenJSON, headerFields: setCookie))
        }

        var outputs = Outputs()
        do {
            if scenario == .decodingFailure {
                let decoding = Planted<StrictToken>(body: body.body, parser: JSONParser<StrictToken>())
                _ = try await client.send(decoding)
            } else {
                _ = try await client.send(request)  // the value is the caller's own data, not a string Courier built
            }
        } catch let error as CourierError {
            outputs.error = error
            outputs.add("String(describing: error)", String(describing: error))
            outputs.add("String(reflecting: error)", String(reflecting: error))
            outputs.add("error.description", error.description)
            outputs.add("error.message", error.message)
            outputs.add("error.localizedDescription", error.localizedDescription)
            outputs.add("error.bodyExcerpt", error.bodyExcerpt)
            outputs.add("error.request", error.request.map { String(describing: $0) })
            outputs.add("error.request.headerFields", error.request.map { "\($0.headerFields)" })
            outputs.add("error.response", error.response.map { String(describing: $0) })
            outputs.add("error.response.headerFields", error.response.map { "\($0.headerFields)" })
        }
        for event in await monitor.events(untilCallsEnded: 1) {
            outputs.add("event", String(describing: event))
            switch event.kind {
            case .adapted(let head): outputs.add("adapted event's header fields", "\(head.headerFields)")
            case .responseHead(let head): outputs.add("responseHead event's header fields", "\(head.headerFields)")
            case .failed(let error, _, _): outputs.add("failed event's error", String(describing: error))
            default: break
            }
        }
        for line in capture.allText { outputs.add("log line", line) }
        outputs.recorded = mock.recordedRequests
        for sent in outputs.recorded {
            let outgoing = OutgoingRequest(head: sent.head, body: sent.body.map { MessageBody($0) })
            outputs.add("cURLDescription", outgoing.cURLDescription(redactor: redactor))
        }
        return outputs
    }

    @Test(
        "the planted secrets really go on the wire (so the checks below mean something)", arguments: BodyKind.allCases)
    func secretsAreSent(body: BodyKind) async throws {
        let outputs = try await Self.run(.transportErrorNamingURL, body: body)
        let sent = try #require(outputs.recorded.first)
        let wire = [sent.head.path ?? "", "\(sent.head.headerFields)", sent.bodyText ?? ""].joined(separator: " ")
        for secret in [
            Self.apiKey, Self.signature, Self.amzSignature, Self.tenantQuery, Self.bearer, Self.tenantHeader,
        ] {
            #expect(wire.contains(secret), "\(secret) was not sent: \(wire)")
        }
        #expect(sent.query?.contains("PLANTED%2Fgoogle%2Bkey-b2") == true, "\(sent.query ?? "")")
        #expect(wire.contains(body == .form ? Self.formPassword : Self.jsonClientSecret))
        let underlying = try #require(outputs.error?.underlyingError)
        #expect("\(underlying)".contains(Self.apiKey), "the transport's own error must name the secret")
    }

    @Test(
        "no planted secret appears in any string Courier produces",
        arguments: Scenario.allCases, BodyKind.allCases
    )
    func noPlantedSecretAnywhere(scenario: Scenario, body: BodyKind) async throws {
        let outputs = try await Self.run(scenario, body: body)
        #expect(outputs.error?.code == scenario.expectedCode, "\(String(describing: outputs.error))")
        #expect(outputs.texts.contains { $0.place == "log line" })
        #expect(outputs.texts.contains { $0.place == "event" })
        for (place, text) in outputs.texts {
            #expect(!text.contains(Self.marker), "a planted secret leaked in \(place): \(text)")
        }
    }

    @Test("the scrubbed error still says what happened and where")
    func scrubbedErrorStaysUseful() async throws {
        let outputs = try await Self.run(.transportErrorNamingURL, body: .form)
        let error = try #require(outputs.error)
        #expect(error.description.contains("POST https://api.example.com/probe?"), "\(error)")
        #expect(error.description.contains("api-key=<redacted>"))
        #expect(error.description.contains("X-Amz-Signature=<redacted>"))
        #expect(error.description.contains("page=2"))
        #expect(error.description.contains("(underlying: POST https://api.example.com/probe?"))
        #expect(error.description.contains("Authorization: <redacted>"))
        let underlying = try #require(error.underlyingError as? LeakyTransportError)
        #expect(underlying.description.contains(Self.bearer), "the underlying error stays as thrown")
    }

    @Test("redirect and cache messages name the URL with its secrets redacted")
    func messagesUseRedactedURLs() async throws {
        let loop = try #require(try await Self.run(.redirectLoop, body: .form).error)
        #expect(
            loop.message
                == "the redirects loop back to https://api.example.com/hop?sig=<redacted>&tenant_token=<redacted>")
        let insecure = try #require(try await Self.run(.redirectToHTTP, body: .form).error)
        #expect(insecure.message?.contains("http://api.example.com/next?sig=<redacted>") == true)
        let scheme = try #require(try await Self.run(.redirectToOtherScheme, body: .form).error)
        #expect(scheme.message?.contains("not ftp://files.example.com/x?sig=<redacted>") == true, "\(scheme)")
        let miss = try #require(try await Self.run(.cacheMiss, body: .form).error)
        #expect(miss.message?.contains("GET https://api.example.com/probe?") == true, "\(miss)")
        #expect(miss.message?.contains("api-key=<redacted>") == true, "\(miss)")
    }
}
