import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// Reliability rows 1–8 against `MockTransport`: Courier, not the transport, decides what a redirect does.
@Suite("RedirectDecision", .timeLimit(.minutes(1)))
struct RedirectDecisionTests {
    static let apiKey = HTTPField.Name("X-Api-Key")!
    static let custom = HTTPField.Name("X-Custom")!

    /// A client whose requests carry every kind of credential.
    static func client(
        baseURL: String = "https://a.test",
        decisions: [any Decision] = [RedirectDecision()]
    ) -> (Client, MockTransport) {
        let mock = MockTransport()
        var configuration = Client.Configuration(decisions: decisions)
        configuration.adapters.append(.bearer { "t0ken" })
        configuration.redactor.sensitiveHeaderNames.insert(apiKey)
        configuration.cleartextPolicy = .always
        let client = Client(
            server: Server(baseURL: URL(string: baseURL)!), transport: mock, configuration: configuration)
        return (client, mock)
    }

    static func probe(method: HTTPRequest.Method = .get, body: RequestBody? = nil) -> Probe<String> {
        var probe = Probe(method: method, path: "/start")
        probe.headers = [
            "Cookie": "session=c00kie", "Proxy-Authorization": "Basic cHJveHk=", "X-Api-Key": "k3y", "X-Custom": "kept",
        ]
        probe.body = body
        return probe
    }

    static func redirect(_ status: Int = 302, to location: String) -> MockResponse {
        .status(status, headerFields: [.location: location])
    }

    static func hasNoCredentials(_ request: MockTransport.RecordedRequest) -> Bool {
        let fields = request.head.headerFields
        return fields[.authorization] == nil && fields[.cookie] == nil && fields[.proxyAuthorization] == nil
            && fields[apiKey] == nil
    }

    @Test("row 1: a redirect to another host carries no sensitive header; X-Custom is kept")
    func crossHostStripsCredentials() async throws {
        let (client, mock) = Self.client()
        mock.stub(.get, "/start", with: Self.redirect(to: "https://b.test/landing"))
        mock.stub(.get, "/landing", with: .text("landed"))
        #expect(try await client.send(Self.probe()) == "landed")
        let requests = mock.recordedRequests
        try #require(requests.count == 2)
        #expect(requests[0].head.headerFields[.authorization] == "Bearer t0ken")
        #expect(requests[0].head.headerFields[.cookie] == "session=c00kie")
        #expect(requests[1].head.authority == "b.test")
        #expect(Self.hasNoCredentials(requests[1]))
        #expect(requests[1].head.headerFields[Self.custom] == "kept")
    }

    @Test("a redirect to another host strips a header the redactor finds by a word of its name (X-Vault-Token)")
    func crossHostStripsWordMatchedHeaders() async throws {
        let (client, mock) = Self.client()
        mock.stub(.get, "/start", with: Self.redirect(to: "https://b.test/landing"))
        mock.stub(.get, "/landing", with: .text("landed"))
        var probe = Self.probe()
        probe.headers = ["X-Vault-Token": "hvs.s3cret", "X-Auth-Key": "cf-k3y", "Idempotency-Key": "order-1"]
        #expect(try await client.send(probe) == "landed")
        let requests = mock.recordedRequests
        try #require(requests.count == 2)
        #expect(requests[0].head.headerFields[HTTPField.Name("X-Vault-Token")!] == "hvs.s3cret")
        #expect(requests[1].head.headerFields[HTTPField.Name("X-Vault-Token")!] == nil)
        #expect(requests[1].head.headerFields[HTTPField.Name("X-Auth-Key")!] == nil)
        #expect(requests[1].head.headerFields[HTTPField.Name("Idempotency-Key")!] == "order-1")
    }

    @Test("a call that requires a credential follows a redirect to another origin (a CDN), without the credential")
    func requiredCredentialFollowsCrossOriginRedirect() async throws {
        let (client, mock) = Self.client()
        mock.stub(.get, "/files/42", with: Self.redirect(to: "https://cdn.test/signed/42?sig=abc"))
        mock.stub(.get, "/signed/42", with: .text("file bytes"))
        var probe = Probe<String>(path: "/files/42")
        probe.authentication = .required
        #expect(try await client.send(probe) == "file bytes")
        let requests = mock.recordedRequests
        try #require(requests.count == 2)
        #expect(requests[0].head.headerFields[.authorization] == "Bearer t0ken")
        #expect(requests[1].head.authority == "cdn.test")
        #expect(Self.hasNoCredentials(requests[1]))
    }

    @Test("a 307 after a 303 keeps the GET the 303 made: the POST's body is not sent again")
    func bodyStaysDroppedAfterA303() async throws {
        let (client, mock) = Self.client()
        mock.stub(.post, "/start", with: Self.redirect(303, to: "/middle"))
        mock.stub(.get, "/middle", with: Self.redirect(307, to: "/end"))
        mock.stub(.get, "/end", with: .text("landed"))
        #expect(try await client.send(Self.probe(method: .post, body: .text("secret form"))) == "landed")
        let requests = mock.recordedRequests
        try #require(requests.count == 3)
        #expect(requests.map(\.head.method) == [.post, .get, .get])
        #expect(requests.map(\.bodyText) == ["secret form", nil, nil])
        #expect(requests[2].head.headerFields[.contentType] == nil)
    }

    /// Signs what it sees of the request, as a signing adapter (AWS SigV4, HTTP message signatures) would, and
    /// derives a digest header from the body when there is one.
    struct SigningAdapter: RequestAdapter {
        let header: HTTPField.Name
        var name: String { "sign" }
        func adapt(_ request: OutgoingRequest, context: AdapterContext) async throws -> OutgoingRequest {
            var request = request
            let method = request.head.method.rawValue
            request.head.headerFields[header] = "\(method) \(request.head.path ?? "") body=\(request.body != nil)"
            if request.body != nil { request.head.headerFields[HTTPField.Name("Content-Digest")!] = "sha-256=:x:" }
            return request
        }
    }

    @Test("after a 303, the request's and the client's adapters see the GET that is sent, without the body")
    func adaptersSeeTheRedirectedRequest() async throws {
        let (client, mock) = Self.client(decisions: [RedirectDecision()])
        let clientSignature = HTTPField.Name("X-Client-Signature")!
        let requestSignature = HTTPField.Name("X-Request-Signature")!
        let signed = client.configured { $0.adapters.append(SigningAdapter(header: clientSignature)) }
        mock.stub(.post, "/start", with: Self.redirect(303, to: "/b?x=1"))
        mock.stub(.get, "/b", with: .text("landed"))
        var probe = Self.probe(method: .post, body: .text("form"))
        probe.query = ["q": "1"]
        probe.extraAdapters = [SigningAdapter(header: requestSignature)]
        #expect(try await signed.send(probe) == "landed")
        let requests = mock.recordedRequests
        try #require(requests.count == 2)
        #expect(requests[0].head.headerFields[clientSignature] == "POST /start?q=1 body=true")
        let redirected = requests[1].head
        #expect(redirected.method == .get && redirected.path == "/b?x=1" && requests[1].body == nil)
        #expect(redirected.headerFields[requestSignature] == "GET /b?x=1 body=false")
        #expect(redirected.headerFields[clientSignature] == "GET /b?x=1 body=false")
        #expect(redirected.headerFields[HTTPField.Name("Content-Digest")!] == nil)
    }

    @Test("after a 307, the adapters see the POST and its body again, at the redirect's URL")
    func adaptersSeeThe307Body() async throws {
        let (client, mock) = Self.client(decisions: [RedirectDecision()])
        let signature = HTTPField.Name("X-Client-Signature")!
        let signed = client.configured { $0.adapters.append(SigningAdapter(header: signature)) }
        mock.stub(.post, "/start", with: Self.redirect(307, to: "/again"))
        mock.stub(.post, "/again", with: .text("landed"))
        #expect(try await signed.send(Self.probe(method: .post, body: .text("form"))) == "landed")
        let requests = mock.recordedRequests
        try #require(requests.count == 2)
        #expect(requests[1].head.headerFields[signature] == "POST /again body=true")
        #expect(requests[1].bodyText == "form")
    }

    /// Sends a `PATCH` as a `POST` with `X-HTTP-Method-Override`, as for servers that take no `PATCH`.
    struct MethodOverrideAdapter: RequestAdapter {
        var name: String { "methodOverride" }
        func adapt(_ request: OutgoingRequest, context: AdapterContext) async throws -> OutgoingRequest {
            var request = request
            guard request.head.method == .patch else { return request }
            request.head.method = .post
            request.head.headerFields[HTTPField.Name("X-HTTP-Method-Override")!] = "PATCH"
            return request
        }
    }

    @Test("after a 307, an adapter that sends a PATCH as a POST still sees the PATCH; the body goes again")
    func methodOverrideAcrossA307() async throws {
        let (client, mock) = Self.client(decisions: [RedirectDecision()])
        let overriding = client.configured { $0.adapters.append(MethodOverrideAdapter()) }
        mock.stub(.post, "/start", with: Self.redirect(307, to: "/again"))
        mock.stub(.post, "/again", with: .text("landed"))
        #expect(try await overriding.send(Self.probe(method: .patch, body: .text("change"))) == "landed")
        let requests = mock.recordedRequests
        try #require(requests.count == 2)
        let override = HTTPField.Name("X-HTTP-Method-Override")!
        #expect(requests.map(\.head.method) == [.post, .post])
        #expect(requests.map { $0.head.headerFields[override] } == ["PATCH", "PATCH"])
        #expect(requests.map(\.bodyText) == ["change", "change"])
    }

    /// Sends a `POST`'s 302 on as a `GET` without saying that the body goes (`dropsBody: false`), then follows a 307.
    struct LaxRedirect: Decision {
        var name: String { "laxRedirect" }
        func decide(_ response: ReceivedResponse, context: DecisionContext) async throws -> DecisionAction {
            guard response.head.status.code == 302 || response.head.status.code == 307,
                let location = response.head.headerFields[.location],
                let url = URL(string: location, relativeTo: URL(string: "https://a.test"))?.absoluteURL
            else { return .continue(with: response) }
            let method: HTTPRequest.Method = response.head.status.code == 302 ? .get : context.request.method
            let target = Redirection(url: url, method: method, dropsBody: false, stripsCredentials: false)
            return .restart(with: context.decisions(replacingCurrentWith: self), redirection: target)
        }
    }

    @Test("a decision's redirect that changes the method drops the body for the rest of the chain, though it says not")
    func methodChangeDropsTheBody() async throws {
        let (client, mock) = Self.client(decisions: [LaxRedirect()])
        mock.stub(.post, "/start", with: Self.redirect(302, to: "/middle"))
        mock.stub(.get, "/middle", with: Self.redirect(307, to: "/end"))
        mock.stub(.get, "/end", with: .text("landed"))
        #expect(try await client.send(Self.probe(method: .post, body: .text("form"))) == "landed")
        let requests = mock.recordedRequests
        try #require(requests.count == 3)
        #expect(requests.map(\.head.method) == [.post, .get, .get])
        #expect(requests.map(\.bodyText) == ["form", nil, nil])
        #expect(requests.dropFirst().allSatisfy { $0.head.headerFields[.contentType] == nil })
    }

    @Test(
        "a redirect to port 0 or a port past 65535 is invalidRedirect at resolve; nothing more is sent",
        arguments: [70000, 0])
    func redirectToAnImpossiblePort(port: Int) async throws {
        let (client, mock) = Self.client()
        mock.stub(.get, "/start", with: Self.redirect(to: "https://cdn.test:\(port)/file"))
        let error = await expectCourierError { try await client.send(Self.probe()) }
        #expect(error?.code == .invalidRedirect)
        #expect(error?.stage == .resolve)
        #expect(mock.recordedRequests.count == 1)
        // The 3xx that led there stays on the error (it was cleared as the next attempt began, before its failure).
        #expect(error?.response?.status.code == 302)
        #expect(error?.response?.headerFields[.location] == "https://cdn.test:\(port)/file")
    }

    @Test("a Host header of the request goes after a redirect to another origin; the call follows it")
    func hostHeaderAcrossOrigins() async throws {
        let (client, mock) = Self.client()
        mock.stub(.get, "/start", with: Self.redirect(to: "https://cdn.test/file"))
        mock.stub(.get, "/file", with: .text("landed"))
        var probe = Self.probe()
        probe.headers.append(name: "Host", value: "a.test")
        #expect(try await client.send(probe) == "landed")
        let requests = mock.recordedRequests
        try #require(requests.count == 2)
        #expect(requests[1].head.authority == "cdn.test")
        #expect(requests[1].head.headerFields[HTTPField.Name("Host")!] == nil)
    }

    @Test(
        "row 2: another port or scheme is another origin",
        arguments: [("https://a.test", "https://a.test:8443/landing"), ("http://a.test", "https://a.test/landing")]
    )
    func otherPortOrScheme(base: String, location: String) async throws {
        let (client, mock) = Self.client(baseURL: base)
        mock.stub(.get, "/start", with: Self.redirect(to: location))
        mock.stub(.get, "/landing", with: .text("landed"))
        _ = try await client.send(Self.probe())
        let requests = mock.recordedRequests
        try #require(requests.count == 2)
        #expect(requests[0].head.headerFields[.cookie] == "session=c00kie")
        #expect(Self.hasNoCredentials(requests[1]))
    }

    @Test("row 2: the same origin written differently keeps credentials (default port, case, trailing dot)")
    func sameOriginKeepsCredentials() async throws {
        let (client, mock) = Self.client()
        mock.stub(.get, "/start", with: Self.redirect(to: "https://A.TEST.:443/landing"))
        mock.stub(.get, "/landing", with: .text("landed"))
        _ = try await client.send(Self.probe())
        let second = try #require(mock.recordedRequests.last)
        #expect(second.head.headerFields[.authorization] == "Bearer t0ken")
        #expect(second.head.headerFields[.cookie] == "session=c00kie")
    }

    @Test("row 3: once stripped, credentials stay stripped for the rest of the chain")
    func strippedStaysStripped() async throws {
        let (client, mock) = Self.client()
        mock.stub(.get, "/start", with: Self.redirect(to: "https://b.test/1"))
        mock.stub(.get, "/1", with: Self.redirect(to: "/2"))
        mock.stub(.get, "/2", with: Self.redirect(to: "https://a.test/back"))
        mock.stub(.get, "/back", with: .text("home"))
        #expect(try await client.send(Self.probe()) == "home")
        let requests = mock.recordedRequests
        try #require(requests.count == 4)
        #expect(requests[2].head.authority == "b.test")
        #expect(requests[2].head.path == "/2")
        #expect(requests.dropFirst().allSatisfy(Self.hasNoCredentials))
    }

    @Test("row 5: https → http is refused with insecureRedirect")
    func httpsToHttpRefused() async throws {
        let (client, mock) = Self.client()
        mock.stub(.get, "/start", with: Self.redirect(to: "http://a.test/plain"))
        let error = await expectCourierError { try await client.send(Self.probe()) }
        #expect(error?.code == .insecureRedirect)
        #expect(mock.recordedRequests.count == 1)
    }

    @Test("row 5: an opt-in follows https → http, with credentials stripped")
    func httpsToHttpOptIn() async throws {
        let (client, mock) = Self.client(decisions: [.redirect(allowsInsecureRedirects: true)])
        mock.stub(.get, "/start", with: Self.redirect(to: "http://a.test/plain"))
        mock.stub(.get, "/plain", with: .text("plain"))
        #expect(try await client.send(Self.probe()) == "plain")
        #expect(mock.recordedRequests.last.map(Self.hasNoCredentials) == true)
    }

    @Test(
        "row 6: non-http(s) and userinfo targets are refused",
        arguments: [
            "file:///etc/passwd", "ftp://a.test/x", "http+unix://%2Fvar%2Frun%2Fsock/x", "https://u:p@a.test/x",
        ]
    )
    func nonHTTPRefused(location: String) async throws {
        let (client, mock) = Self.client()
        mock.stub(.get, "/start", with: Self.redirect(to: location))
        let error = await expectCourierError { try await client.send(Self.probe()) }
        #expect(error?.code == .invalidRedirect)
        #expect(mock.recordedRequests.count == 1)
        #expect(error?.description.contains("u:p@") == false)
    }

    @Test(
        "a redirect to a path with an encoded dot segment or NUL is invalidRedirect, not the caller's invalidURL",
        arguments: ["/files/%2e%2e/admin", "/files/%2E/x", "/k/%00", "/files/..%2Fadmin"])
    func encodedDotSegmentTargetRefused(location: String) async throws {
        let (client, mock) = Self.client()
        mock.stub(.get, "/start", with: Self.redirect(to: location))
        let error = await expectCourierError { try await client.send(Self.probe()) }
        // The server's target, not a pathSegment the caller built.
        #expect(error?.code == .invalidRedirect)
        #expect(error?.stage == .resolve)
        #expect(mock.recordedRequests.count == 1)
        #expect(error?.response?.headerFields[.location] == location)
    }

    @Test("row 6: two different Location fields are refused, two equal ones followed")
    func severalLocations() async throws {
        let (client, mock) = Self.client()
        var fields = HTTPFields()
        fields.append(HTTPField(name: .location, value: "https://b.test/x"))
        fields.append(HTTPField(name: .location, value: "https://c.test/y"))
        mock.stub(.get, "/start", with: .status(302, headerFields: fields))
        let error = await expectCourierError { try await client.send(Self.probe()) }
        #expect(error?.code == .invalidRedirect)
        #expect(mock.recordedRequests.count == 1)

        let (same, sameMock) = Self.client()
        var equal = HTTPFields()
        equal.append(HTTPField(name: .location, value: "/end"))
        equal.append(HTTPField(name: .location, value: "/end"))
        sameMock.stub(.get, "/start", with: .status(302, headerFields: equal))
        sameMock.stub(.get, "/end", with: .text("end"))
        #expect(try await same.send(Self.probe()) == "end")
    }

    @Test("row 6: relative references resolve per RFC 3986 §5.2 with dot segments removed")
    func relativeResolution() async throws {
        let (client, mock) = Self.client(baseURL: "https://a.test/v1")
        mock.stub(.get, "/v1/start", with: Self.redirect(to: "../other/./x?y=1"))
        mock.stub(.get, "/other/x", with: .text("resolved"))
        #expect(try await client.send(Self.probe()) == "resolved")
        #expect(mock.recordedRequests.last?.head.path == "/other/x?y=1")
    }

    @Test("row 7: a loop fails with redirectCycle, a long chain with redirectLimit")
    func loopsAndLimits() async throws {
        let (client, mock) = Self.client()
        // start → b → start (a redirect back to the first URL is followed once) → b again: a cycle.
        mock.stub(.get, "/start", with: [Self.redirect(to: "/b"), Self.redirect(to: "/b")])
        mock.stub(.get, "/b", with: [Self.redirect(to: "/start")])
        let cycle = await expectCourierError { try await client.send(Self.probe()) }
        #expect(cycle?.code == .redirectCycle)
        #expect(mock.recordedRequests.map(\.head.path) == ["/start", "/b", "/start"])

        let (limited, chain) = Self.client(decisions: [.redirect(maxRedirects: 3)])
        chain.stub(.get, "/start", with: Self.redirect(to: "/r1"))
        for hop in 1...4 {
            chain.stub(.get, "/r\(hop)", with: Self.redirect(to: "/r\(hop + 1)"))
        }
        let limit = await expectCourierError { try await limited.send(Self.probe()) }
        #expect(limit?.code == .redirectLimit)
        #expect(chain.recordedRequests.count == 4)
    }

    @Test(
        "row 8: method and body per status",
        arguments: [
            (301, HTTPRequest.Method.post, HTTPRequest.Method.get, false),
            (302, .post, .get, false),
            (303, .post, .get, false),
            (303, .put, .get, false),
            (303, .head, .head, false),
            (307, .post, .post, true),
            (308, .put, .put, true),
            (301, .put, .put, true),
        ]
    )
    func methodRewriting(status: Int, method: HTTPRequest.Method, expected: HTTPRequest.Method, keepsBody: Bool)
        async throws
    {
        let (client, mock) = Self.client()
        mock.stub(method, "/start", with: Self.redirect(status, to: "/next"))
        mock.stub(expected, "/next", with: .text("next"))
        _ = try await client.send(Self.probe(method: method, body: method == .head ? nil : .json(["a": 1])))
        let second = try #require(mock.recordedRequests.last)
        #expect(second.head.method == expected)
        if method != .head {
            #expect((second.body != nil) == keepsBody)
            #expect((second.head.headerFields[.contentType] != nil) == keepsBody)
            if keepsBody { #expect(second.bodyText == #"{"a":1}"#) }
        }
    }

    @Test("row 8: a one-shot body is never re-sent on 307; the 307 comes back as the response")
    func oneShotBodyNotResent() async throws {
        let (client, mock) = Self.client()
        mock.stub(.post, "/start", with: Self.redirect(307, to: "/next"))
        let stream = AsyncThrowingStream<ArraySlice<UInt8>, any Error> { continuation in
            continuation.yield(ArraySlice("once".utf8))
            continuation.finish()
        }
        let body = MessageBody(stream, length: .known(4), iterationBehavior: .single)
        let error = await expectCourierError { try await client.send(Self.probe(method: .post, body: .stream(body))) }
        #expect(error?.code == .unacceptableStatus)
        #expect(error?.response?.status.code == 307)
        #expect(mock.recordedRequests.count == 1)
        #expect(mock.recordedRequests.first?.bodyText == "once")
    }

    @Test("a 303 after a one-shot POST follows with a GET (nothing to re-send)")
    func oneShotBodyFollows303() async throws {
        let (client, mock) = Self.client()
        mock.stub(.post, "/start", with: Self.redirect(303, to: "/result"))
        mock.stub(.get, "/result", with: .text("done"))
        let stream = AsyncThrowingStream<ArraySlice<UInt8>, any Error> { continuation in
            continuation.yield(ArraySlice("once".utf8))
            continuation.finish()
        }
        let body = MessageBody(stream, length: .unknown, iterationBehavior: .single)
        #expect(try await client.send(Self.probe(method: .post, body: .stream(body))) == "done")
        #expect(mock.recordedRequests.last?.body == nil)
    }

    @Test("a retry after a 303 sends the GET again at the redirect's URL, without the POST's body")
    func retryAfterARedirect() async throws {
        let (client, mock) = Self.client()
        let retrying = client.configured { $0.retryPolicy = RetryPolicy(maxRetries: 1, backoff: .none) }
        mock.stub(.post, "/start", with: Self.redirect(303, to: "/b?x=1"))
        mock.stub(.get, "/b", with: [.status(503), .text("landed")])
        #expect(try await retrying.send(Self.probe(method: .post, body: .text("form"))) == "landed")
        let requests = mock.recordedRequests
        try #require(requests.count == 3)
        #expect(requests.map(\.head.method) == [.post, .get, .get])
        #expect(requests.map(\.head.path) == ["/start", "/b?x=1", "/b?x=1"])
        #expect(requests.map(\.bodyText) == ["form", nil, nil])
        #expect(requests[2].head.headerFields[.contentType] == nil)
    }

    @Test("a retry after a cross-origin redirect goes to that origin again, still without credentials")
    func retryAfterACrossOriginRedirect() async throws {
        let (client, mock) = Self.client()
        let retrying = client.configured { $0.retryPolicy = RetryPolicy(maxRetries: 1, backoff: .none) }
        mock.stub(.get, "/start", with: Self.redirect(to: "https://cdn.test/file"))
        mock.stub(.get, "/file", with: [.status(503), .text("bytes")])
        #expect(try await retrying.send(Self.probe()) == "bytes")
        let requests = mock.recordedRequests
        try #require(requests.count == 3)
        #expect(requests.map(\.head.authority) == ["a.test", "cdn.test", "cdn.test"])
        #expect(requests[1...].allSatisfy(Self.hasNoCredentials))
    }

    @Test("a token refresh after a 303 replays the GET at the redirect's URL with the new token")
    func tokenRefreshAfterARedirect() async throws {
        let harness = try await AuthFixtures.harness()
        AuthFixtures.stubTokenEndpoint(harness.mock)
        harness.mock.stub(.post, "/start", with: Self.redirect(303, to: "/landing?x=1"))
        AuthFixtures.stubAPI(harness.mock, path: "/landing", accepting: { "access-2" })
        var probe = Probe<String>(method: .post, path: "/start")
        probe.body = .text("form")
        #expect(try await harness.client.send(probe) == "ok")
        let requests = harness.apiRequests
        try #require(requests.count == 3)
        #expect(requests.map(\.head.method) == [.post, .get, .get])
        #expect(requests.map(\.head.path) == ["/start", "/landing?x=1", "/landing?x=1"])
        #expect(requests.map(\.bodyText) == ["form", nil, nil])
        #expect(
            requests.map { $0.head.headerFields[.authorization] } == [
                "Bearer access-1", "Bearer access-1", "Bearer access-2",
            ])
        #expect(harness.tokenRequests.count == 1)
    }

    @Test("the trace shows each redirect as a restart")
    func traceShowsRedirects() async throws {
        let (client, mock) = Self.client()
        mock.stub(.get, "/start", with: Self.redirect(to: "/next"))
        mock.stub(.get, "/next", with: .text("gone", status: 410))
        let error = await expectCourierError { try await client.send(Self.probe()) }
        #expect(error?.trace.description == "redirect ↻ restart → validateStatus ✗")
    }
}
