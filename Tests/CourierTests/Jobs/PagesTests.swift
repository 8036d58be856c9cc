import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

private struct ItemList: Decodable, Sendable {
    let items: [Int]
    let next: String?
}

/// A cursor-paginated list: `GET /items?cursor=…`.
private struct ListItems: Request {
    typealias Response = ItemList
    var cursor: String?
    var path: String { "/items" }
    var query: Parameters? { cursor.map { ["cursor": $0] } }
}

/// A Link-paginated list of numbers.
private struct ListNumbers: Request {
    typealias Response = [Int]
    var path: String { "/numbers" }
    var query: Parameters? { ["per_page": "2"] }
}

private let link = HTTPField.Name("Link")!

@Suite("Jobs: pagination", .timeLimit(.minutes(1)))
struct PagesTests {
    @Test("a next cursor in the body: every page in order, the cursor sent as the query, the end at a nil cursor")
    func cursorPages() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/items") { request in
            switch request.query ?? "" {
            case "": .json(raw: #"{"items":[1,2],"next":"c2"}"#)
            case "cursor=c2": .json(raw: #"{"items":[3,4],"next":"c3"}"#)
            case "cursor=c3": .json(raw: #"{"items":[5],"next":null}"#)
            default: .status(400)
            }
        }
        var items: [Int] = []
        var numbers: [Int] = []
        for try await page in client.pages(of: ListItems(), next: .cursor({ $0.next }) { $0.with(cursor: $1) }) {
            items += page.value.items
            numbers.append(page.number)
        }
        #expect(items == [1, 2, 3, 4, 5])
        #expect(numbers == [1, 2, 3])
        #expect(mock.recordedRequests.map(\.query) == [nil, "cursor=c2", "cursor=c3"])
        #expect(client.callsInFlight == 0)
    }

    @Test("breaking out of the loop sends no more requests")
    func earlyBreak() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/items") { _ in .json(raw: #"{"items":[1],"next":"again"}"#) }
        var seen = 0
        for try await _ in client.pages(of: ListItems(), next: .cursor({ $0.next }) { $0.with(cursor: $1) }) {
            seen += 1
            if seen == 2 { break }
        }
        #expect(mock.recordedRequests.count == 2)
    }

    @Test("a closure strategy sees the page's value, head and request")
    func closureStrategy() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/items") { request in
            .json(raw: #"{"items":[1],"next":null}"#, headerFields: [.init("X-Page")!: request.query ?? "first"])
        }
        let pages = client.pages(
            of: ListItems(),
            next: NextPage { page in
                page.response.headerFields[.init("X-Page")!] == "first" ? page.request.with(cursor: "two") : nil
            })
        var heads: [String] = []
        for try await page in pages { heads.append(page.response.headerFields[.init("X-Page")!] ?? "") }
        #expect(heads == ["first", "cursor=two"])
        #expect(mock.recordedRequests.count == 2)
    }

    @Test("a Link header: absolute and relative links are followed with the same request; no link ends it")
    func linkPages() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/numbers") { request in
            switch request.query ?? "" {
            case "per_page=2":
                .json(
                    raw: "[1,2]",
                    headerFields: [
                        link:
                            #"<https://api.example.com/numbers?page=2&per_page=2>; rel="next", <https://api.example.com/numbers?page=3&per_page=2>; rel="last""#
                    ])
            case "page=2&per_page=2":
                .json(
                    raw: "[3,4]",
                    headerFields: [
                        link: #"</numbers?page=1>; rel="prev first", </numbers?page=3&per_page=2>; rel=next"#
                    ])
            case "page=3&per_page=2": .json(raw: "[5]", headerFields: [link: #"</numbers?page=1>; rel="first""#])
            default: .status(400)
            }
        }
        var values: [Int] = []
        var urls: [String] = []
        for try await page in client.pages(of: ListNumbers(), next: .link()) {
            values += page.value
            urls.append(page.url?.absoluteString ?? "")
        }
        #expect(values == [1, 2, 3, 4, 5])
        #expect(
            urls == [
                "https://api.example.com/numbers?per_page=2", "https://api.example.com/numbers?page=2&per_page=2",
                "https://api.example.com/numbers?page=3&per_page=2",
            ])
        #expect(mock.recordedRequests.allSatisfy { $0.head.method == .get })
    }

    @Test("a linked page keeps its server's TLS options, and on the server's origin its headers")
    func linkKeepsTheServer() async throws {
        let mock = MockTransport()
        let tls = TLSRecorder(base: mock)
        var serverTLS = TLSOptions()
        serverTLS.minimumVersion = .tls13
        let server = Server(
            baseURL: try #require(URL(string: "https://api.example.com")), headers: ["X-Api-Key": "k1"],
            tls: serverTLS)
        let client = Client(server: server, transport: tls, configuration: Client.Configuration(retryPolicy: .disabled))
        mock.stub(.get, "/numbers") { request in
            switch request.query ?? "" {
            case "per_page=2":
                .json(raw: "[1]", headerFields: [link: "</numbers?page=2&per_page=2>; rel=next"])
            case "page=2&per_page=2":
                .json(raw: "[2]", headerFields: [link: "<https://cdn.example.net/numbers?page=3>; rel=next"])
            default: .json(raw: "[3]")
            }
        }
        var values: [Int] = []
        for try await page in client.pages(of: ListNumbers(), next: .link()) { values += page.value }
        #expect(values == [1, 2, 3])
        let keys = mock.recordedRequests.map { $0.head.headerFields[HTTPField.Name("X-Api-Key")!] ?? "none" }
        #expect(keys == ["k1", "k1", "none"], "the API key goes to the server's origin only")
        #expect(tls.minimumVersions == [.tls13, .tls13, .tls13], "the server's TLS options for every page")
    }

    @Test("a link to another origin gets no bearer token; the client's own origin does")
    func linkToOtherOriginHasNoToken() async throws {
        let (client, mock) = Fixtures.client { $0.adapters.append(.bearer { "secret-token" }) }
        mock.stub(.get, "/numbers") { request in
            let auth = request.head.headerFields[.authorization] ?? "none"
            if request.head.authority == "api.example.com" {
                return .json(
                    raw: "[1]",
                    headerFields: [link: "<https://cdn.example.net/numbers?page=2>; rel=next", .init("X-Auth")!: auth])
            }
            return .json(raw: "[2]", headerFields: [.init("X-Auth")!: auth])
        }
        var auths: [String] = []
        for try await page in client.pages(of: ListNumbers(), next: .link()) {
            auths.append(page.response.headerFields[.init("X-Auth")!] ?? "")
        }
        #expect(auths == ["Bearer secret-token", "none"])
        #expect(mock.recordedRequests.last?.head.authority == "cdn.example.net")
    }

    @Test("links that lead back to a page already fetched end the sequence with an error, not an endless loop")
    func linkCycle() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/numbers") { request in
            // Page 2 links back to page 1, written differently (host case, default port).
            request.head.path?.contains("next=2") == true
                ? .json(raw: "[2]", headerFields: [link: "<https://API.example.com:443/numbers?per_page=2>; rel=next"])
                : .json(raw: "[1]", headerFields: [link: "</numbers?next=2>; rel=next"])
        }
        var values: [[Int]] = []
        let error = await expectCourierError {
            for try await page in client.pages(of: ListNumbers(), next: .link()) {
                values.append(page.value)
                if values.count > 10 { break }
            }
        }
        #expect(values == [[1], [2]])
        #expect(error?.code == .unexpectedResponse)
        #expect(mock.recordedRequests.count == 2)
    }

    @Test("a cycle's error shows the link with the client's own sensitive query keys redacted")
    func linkCycleRedactsWithTheClientsRedactor() async throws {
        let (client, mock) = Fixtures.client { $0.redactor.sensitiveQueryKeys.insert("tenant_token") }
        mock.stub(.get, "/numbers") { request in
            let path = request.head.path ?? ""
            if path.contains("next=3") {
                return .json(raw: "[3]", headerFields: [link: "</numbers?next=2&tenant_token=PLANTED>; rel=next"])
            }
            if path.contains("next=2") { return .json(raw: "[2]", headerFields: [link: "</numbers?next=3>; rel=next"]) }
            return .json(raw: "[1]", headerFields: [link: "</numbers?next=2&tenant_token=PLANTED>; rel=next"])
        }
        let error = await expectCourierError {
            for try await _ in client.pages(of: ListNumbers(), next: .link()) {}
        }
        #expect(error?.code == .unexpectedResponse)
        #expect(error?.message?.contains("tenant_token=<redacted>") == true, "\(String(describing: error))")
        #expect(!"\(String(describing: error))".contains("PLANTED"))
    }

    @Test(
        "a page whose next link is itself, spelled another way (host case, default port, fragment), is the last",
        arguments: [
            "<https://API.example.com:443/numbers?per_page=2>; rel=next",
            "<https://api.example.com/numbers?per_page=2#top>; rel=next",
            "</numbers?per_page=2>; rel=next",
        ])
    func linkToItself(header: String) async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/numbers", with: .json(raw: "[1]", headerFields: [link: header]))
        var values: [[Int]] = []
        for try await page in client.pages(of: ListNumbers(), next: .link()) { values.append(page.value) }
        #expect(values == [[1]])
        #expect(mock.recordedRequests.count == 1)
    }

    @Test("a link to another origin goes without the credential headers the request itself states")
    func linkToOtherOriginDropsRequestCredentials() async throws {
        struct Keyed: Request {
            typealias Response = [Int]
            var path: String { "/numbers" }
            var headers: RequestHeaders {
                ["Authorization": "token secret", "X-Api-Key": "key-1", "Cookie": "s=1", "X-Trace": "t1"]
            }
        }
        let (client, mock) = Fixtures.client { $0.redactor.sensitiveHeaderNames.insert(HTTPField.Name("X-Api-Key")!) }
        mock.stub(.get, "/numbers") { request in
            switch (request.head.authority, request.head.path) {
            case ("api.example.com", "/numbers"):
                .json(raw: "[1]", headerFields: [link: "<https://api.example.com/numbers?page=2>; rel=next"])
            case ("api.example.com", _):
                .json(raw: "[2]", headerFields: [link: "<https://cdn.example.net/numbers?page=3>; rel=next"])
            default: .json(raw: "[3]")
            }
        }
        var values: [[Int]] = []
        for try await page in client.pages(of: Keyed(), next: .link()) { values.append(page.value) }
        #expect(values == [[1], [2], [3]])
        let sent = mock.recordedRequests.map(\.head.headerFields)
        #expect(sent.count == 3)
        for fields in sent.prefix(2) {
            #expect(fields[.authorization] == "token secret")
            #expect(fields[HTTPField.Name("X-Api-Key")!] == "key-1")
        }
        #expect(sent.last?[.authorization] == nil)
        #expect(sent.last?[HTTPField.Name("X-Api-Key")!] == nil)
        #expect(sent.last?[.cookie] == nil)
        #expect(sent.last?[HTTPField.Name("X-Trace")!] == "t1")
    }

    @Test(
        "a link that is not http(s), carries userinfo, or goes from https to http ends the sequence with invalidURL",
        arguments: ["ftp://api.example.com/numbers", "https://user:pw@api.example.com/n", "http://api.example.com/n"])
    func unsafeLinks(target: String) async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/numbers") { _ in .json(raw: "[1]", headerFields: [link: "<\(target)>; rel=\"next\""]) }
        var pages = client.pages(of: ListNumbers(), next: .link()).makeAsyncIterator()
        #expect(try await pages.next()?.value == [1])
        let error = try #require(await expectCourierError { try await pages.next() })
        #expect(error.code == .invalidURL)
        #expect(mock.recordedRequests.count == 1)
    }

    @Test("a failed page ends the sequence with its error")
    func failedPage() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/items", with: [.json(raw: #"{"items":[1],"next":"c2"}"#), .status(503)])
        var pages = client.pages(of: ListItems(), next: .cursor({ $0.next }) { $0.with(cursor: $1) })
            .makeAsyncIterator()
        #expect(try await pages.next()?.value.items == [1])
        let error = try #require(await expectCourierError { try await pages.next() })
        #expect(error.response?.status.code == 503)
        #expect(try await pages.next() == nil)
    }

    @Test("cancelling the iterating task by tag cancels the page in flight")
    func cancelPages() async throws {
        let (client, mock) = Fixtures.client()
        let gate = JobFixtures.Gate()
        var arrivals = gate.arrivals.makeAsyncIterator()
        mock.stub(.get, "/items") { _ in
            guard await gate.enter("page") else { throw CancellationError() }
            return .json(raw: #"{"items":[1],"next":null}"#)
        }
        let reading = Task {
            var count = 0
            for try await _ in client.pages(
                of: ListItems(), next: .cursor({ $0.next }) { $0.with(cursor: $1) }, tags: ["feed"])
            {
                count += 1
            }
            return count
        }
        _ = await JobFixtures.waitFor(1, on: &arrivals)
        #expect(client.cancelAll(tagged: "feed") == 2)  // the page's call and the sequence
        await #expect(throws: CancellationError.self) { try await reading.value }
        #expect(client.callsInFlight == 0)
    }
}

extension ListItems {
    fileprivate func with(cursor: String) -> ListItems { ListItems(cursor: cursor) }
}

/// Forwards to `base`, recording each request's TLS minimum version.
private final class TLSRecorder: Transport {
    let base: MockTransport
    private let versions = DecisionFixtures.Shared<[TLSOptions.Version]>([])
    init(base: MockTransport) { self.base = base }

    var minimumVersions: [TLSOptions.Version] { versions.value }

    func send(_ request: OutgoingRequest, context: TransportContext) async throws -> TransportResponse {
        let version = context.tls.minimumVersion
        versions.update { $0.append(version) }
        return try await base.send(request, context: context)
    }
}

extension PagesTests {
    @Test("a link to another origin goes without the credential headers the client's own adapters add")
    func linkToOtherOriginDropsClientCredentials() async throws {
        let (client, mock) = Fixtures.client {
            $0.adapters.append(.header("Authorization", "token pat"))
            $0.adapters.append(.header("Cookie", "s=1"))
        }
        mock.stub(.get, "/numbers") { request in
            request.head.authority == "api.example.com"
                ? .json(raw: "[1]", headerFields: [link: "<https://cdn.example.net/numbers?page=2>; rel=next"])
                : .json(raw: "[2]")
        }
        var values: [[Int]] = []
        for try await page in client.pages(of: ListNumbers(), next: .link()) { values.append(page.value) }
        #expect(values == [[1], [2]])
        let sent = mock.recordedRequests.map(\.head.headerFields)
        #expect(sent.first?[.authorization] == "token pat")
        #expect(sent.last?[.authorization] == nil)
        #expect(sent.last?[.cookie] == nil)
    }

    @Test(
        "a link to another origin goes without the query credential the client's adapters add; its own origin keeps it")
    func linkToOtherOriginDropsClientQueryKey() async throws {
        let (client, mock) = Fixtures.client { $0.adapters.append(.query(["api_key": "k-123"])) }
        mock.stub(.get, "/numbers") { request in
            switch (request.head.authority, request.query ?? "") {
            case ("api.example.com", "per_page=2&api_key=k-123"):
                .json(raw: "[1]", headerFields: [link: "<https://api.example.com/numbers?page=2>; rel=next"])
            case ("api.example.com", _):
                .json(raw: "[2]", headerFields: [link: "<https://cdn.example.net/numbers?page=3>; rel=next"])
            default: .json(raw: "[3]")
            }
        }
        var values: [[Int]] = []
        for try await page in client.pages(of: ListNumbers(), next: .link()) { values.append(page.value) }
        #expect(values == [[1], [2], [3]])
        #expect(
            mock.recordedRequests.map(\.head.path) == [
                "/numbers?per_page=2&api_key=k-123", "/numbers?page=2&api_key=k-123", "/numbers?page=3",
            ])
    }

    @Test("a last page that links to itself ends the sequence when a client adapter adds to the query")
    func selfLinkWithAClientQueryKey() async throws {
        let (client, mock) = Fixtures.client { $0.adapters.append(.query(["api_key": "k-123"])) }
        mock.stub(.get, "/numbers") { request in
            request.query == "per_page=2&api_key=k-123"
                ? .json(raw: "[1]", headerFields: [link: "<https://api.example.com/numbers?page=2>; rel=next"])
                : .json(raw: "[2]", headerFields: [link: "<https://api.example.com/numbers?page=2>; rel=next"])
        }
        var values: [[Int]] = []
        for try await page in client.pages(of: ListNumbers(), next: .link()) { values.append(page.value) }
        #expect(values == [[1], [2]])
        #expect(mock.recordedRequests.count == 2)
    }

    @Test("a first page that links to itself ends the sequence when a client adapter adds to the query")
    func firstPageSelfLinkWithAClientQueryKey() async throws {
        let (client, mock) = Fixtures.client { $0.adapters.append(.query(["api_key": "k-123"])) }
        mock.stub(.get, "/numbers", with: .json(raw: "[1]", headerFields: [link: "</numbers?per_page=2>; rel=next"]))
        var values: [[Int]] = []
        for try await page in client.pages(of: ListNumbers(), next: .link()) { values.append(page.value) }
        #expect(values == [[1]])
        #expect(mock.recordedRequests.count == 1)
    }

    @Test("a link that echoes the client adapter's query key sends it once, not once more per page")
    func echoedClientQueryKeyIsNotDoubled() async throws {
        let (client, mock) = Fixtures.client { $0.adapters.append(.query(["api_key": "k-123"])) }
        mock.stub(.get, "/numbers") { request in
            let query = request.query ?? ""
            return query.hasPrefix("page=2")
                ? .json(raw: "[2]")
                : .json(raw: "[1]", headerFields: [link: "</numbers?page=2&api_key=k-123>; rel=next"])
        }
        var values: [[Int]] = []
        for try await page in client.pages(of: ListNumbers(), next: .link()) { values.append(page.value) }
        #expect(values == [[1], [2]])
        #expect(
            mock.recordedRequests.map(\.head.path) == [
                "/numbers?per_page=2&api_key=k-123", "/numbers?page=2&api_key=k-123",
            ])
    }

    /// Signs what it sees of the request (method, authority, path), as a request signer would.
    struct PathSigner: RequestAdapter {
        var name: String { "sign" }
        func adapt(_ request: OutgoingRequest, context: AdapterContext) async throws -> OutgoingRequest {
            var request = request
            request.head.headerFields[HTTPField.Name("X-Signature")!] =
                "\(request.head.method) \(request.head.authority ?? "") \(request.head.path ?? "")"
            return request
        }
    }

    /// ``ListNumbers`` with a signer among its own adapters.
    private struct SignedNumbers: Request {
        typealias Response = [Int]
        var path: String { "/numbers" }
        var query: Parameters? { ["per_page": "2"] }
        var adapters: [any RequestAdapter] { standardAdapters + [PathSigner()] }
    }

    @Test("the request's own adapters see each linked page's URL, as it is sent")
    func requestAdaptersSeeTheLinkedURL() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/numbers") { request in
            request.query == "per_page=2"
                ? .json(raw: "[1]", headerFields: [link: "<https://api.example.com/numbers?page=2>; rel=next"])
                : .json(raw: "[2]")
        }
        for try await _ in client.pages(of: SignedNumbers(), next: .link()) {}
        let signatures = mock.recordedRequests.map { $0.head.headerFields[HTTPField.Name("X-Signature")!] }
        #expect(signatures == ["GET api.example.com /numbers?per_page=2", "GET api.example.com /numbers?page=2"])
        #expect(mock.recordedRequests.map(\.head.path) == ["/numbers?per_page=2", "/numbers?page=2"])
    }

    @Test("a link to the origin of another of the client's servers keeps the client's credentials")
    func linkToKnownServerKeepsCredentials() async throws {
        let mock = MockTransport()
        let production = Server(baseURL: try #require(URL(string: "https://api.example.com")), environment: .production)
        let files = Server(baseURL: try #require(URL(string: "https://files.example.com")), environment: .staging)
        var configuration = Client.Configuration(retryPolicy: .disabled)
        configuration.adapters.append(.header("Authorization", "token pat"))
        let client = Client(
            servers: [production, files], environment: .production, transport: mock, configuration: configuration)
        mock.stub(.get, "/numbers") { request in
            request.head.authority == "api.example.com"
                ? .json(raw: "[1]", headerFields: [link: "<https://files.example.com/numbers?page=2>; rel=next"])
                : .json(raw: "[2]")
        }
        var values: [[Int]] = []
        for try await page in client.pages(of: ListNumbers(), next: .link()) { values.append(page.value) }
        #expect(values == [[1], [2]])
        #expect(mock.recordedRequests.map { $0.head.headerFields[.authorization] } == ["token pat", "token pat"])
    }

    @Test("a request that requires a credential follows a link to another origin without one, as after a redirect")
    func requiredCredentialAcrossOrigins() async throws {
        struct Private: Request {
            typealias Response = [Int]
            var path: String { "/numbers" }
            var authentication: AuthenticationRequirement { .required }
        }
        let (client, mock) = Fixtures.client { $0.adapters.append(.bearer { "secret-token" }) }
        mock.stub(.get, "/numbers") { request in
            request.head.authority == "api.example.com"
                ? .json(raw: "[1]", headerFields: [link: "<https://cdn.example.net/numbers?page=2>; rel=next"])
                : .json(raw: "[2]")
        }
        var values: [[Int]] = []
        for try await page in client.pages(of: Private(), next: .link()) { values.append(page.value) }
        #expect(values == [[1], [2]])
        #expect(mock.recordedRequests.map { $0.head.headerFields[.authorization] } == ["Bearer secret-token", nil])
    }

    @Test("a link that a redirect answers with the page before it is a cycle too")
    func linkCycleThroughRedirect() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/numbers") { request in
            switch request.head.path ?? "" {
            case "/numbers?per_page=2": .json(raw: "[1]", headerFields: [link: "</numbers?page=8>; rel=next"])
            case "/numbers?page=8": .json(raw: "[8]", headerFields: [link: "</numbers?page=9>; rel=next"])
            // Past the end: the server clamps to the last page.
            default: .status(302, headerFields: [.location: "/numbers?page=8"])
            }
        }
        var values: [[Int]] = []
        let error = await expectCourierError {
            for try await page in client.pages(of: ListNumbers(), next: .link()) {
                values.append(page.value)
                if values.count > 10 { break }
            }
        }
        #expect(error?.code == .unexpectedResponse)
        #expect(error?.message?.contains("page 2's next link led, through a redirect, back to page 2") == true)
        #expect(values == [[1], [8]])
        #expect(mock.recordedRequests.count == 4)
    }

    @Test("a next cursor that comes back ends the sequence with an error, not an endless loop")
    func cursorCycle() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/items") { request in
            switch request.query ?? "" {
            case "": .json(raw: #"{"items":[1],"next":"c2"}"#)
            case "cursor=c2": .json(raw: #"{"items":[2],"next":"c3"}"#)
            default: .json(raw: #"{"items":[3],"next":"c2"}"#)
            }
        }
        var items: [Int] = []
        let error = await expectCourierError {
            for try await page in client.pages(of: ListItems(), next: .cursor({ $0.next }) { $0.with(cursor: $1) }) {
                items += page.value.items
                if items.count > 10 { break }
            }
        }
        #expect(error?.code == .unexpectedResponse)
        #expect(error?.message?.contains("page 2") == true, "\(String(describing: error?.message))")
        #expect(items == [1, 2, 3])
        #expect(mock.recordedRequests.count == 3)
    }

    @Test("cancelAll between two pages stops the sequence before the next page is sent")
    func cancelBetweenPages() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/items") { _ in .json(raw: #"{"items":[1],"next":"c2"}"#) }
        var pages = client.pages(of: ListItems(), next: .cursor({ $0.next }) { $0.with(cursor: $1) }, tags: ["feed"])
            .makeAsyncIterator()
        #expect(try await pages.next()?.value.items == [1])
        #expect(client.callsInFlight == 1)
        #expect(client.cancelAll(tagged: "feed") == 1)
        await #expect(throws: CancellationError.self) { try await pages.next() }
        #expect(mock.recordedRequests.count == 1)
        #expect(try await pages.next() == nil)
        #expect(client.callsInFlight == 0)
    }

    /// ``ListNumbers`` whose server, once `hook` is set, calls it when read (a page's call reads it while it is set
    /// up, after the sequence's own check for a cancellation).
    private struct HookedNumbers: Request {
        typealias Response = [Int]
        let hook: DecisionFixtures.Shared<(@Sendable () -> Void)?>
        var path: String { "/numbers" }
        var server: Server? {
            hook.value?()
            return nil
        }
    }

    @Test("a cancelAll that lands while a page's call is set up: that page is not handed out")
    func cancelWhileAPageIsSetUp() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/numbers") { request in
            request.query == nil
                ? .json(raw: "[1]", headerFields: [link: "<https://api.example.com/numbers?page=2>; rel=next"])
                : .json(raw: "[2]")
        }
        let hook = DecisionFixtures.Shared<(@Sendable () -> Void)?>(nil)
        var pages = client.pages(of: HookedNumbers(hook: hook), next: .link(), tags: ["feed"]).makeAsyncIterator()
        #expect(try await pages.next()?.value == [1])
        let counted = DecisionFixtures.Shared(0)
        hook.update { $0 = { counted.update { $0 += client.cancelAll(tagged: "feed") } } }
        await #expect(throws: CancellationError.self) { try await pages.next() }
        #expect(counted.value >= 1)
    }

}
