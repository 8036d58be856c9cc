import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// RFC 9111 rules, client-level, on `MockTransport` with an injected "now" (reliability rows 37, 39, 40, 41).
@Suite("HTTPCache: RFC 9111", .timeLimit(.minutes(1)))
struct HTTPCacheTests {
    typealias Page = CacheFixtures.Page

    @Test("a fresh entry (max-age) is served without the network, with its age, and the log says cache hit")
    func freshHit() async throws {
        let harness = try CacheFixtures.harness()
        harness.mock.stub(
            .get, "/page", with: .text("v1", headerFields: CacheFixtures.fields(["Cache-Control": "max-age=60"])))
        let first = try await harness.send()
        #expect(first.value == "v1")
        #expect(first.cacheStatus?.outcome == .miss)
        harness.time.advance(by: 30)
        let second = try await harness.send()
        #expect(second.value == "v1")
        #expect(second.cacheStatus?.outcome == .hit)
        #expect(second.cacheStatus?.age == .seconds(30))
        #expect(harness.networkCount == 1)
        #expect(harness.log.messages.last?.contains("[cache hit → validateStatus ✓ → parse ✓]") == true)
    }

    @Test(
        "row 40: a stale entry with an ETag is revalidated with If-None-Match; the 304 merges headers and serves the stored body"
    )
    func revalidatesWithETag() async throws {
        let harness = try CacheFixtures.harness()
        harness.mock.stub(
            .get, "/page",
            with: [
                .text(
                    "body-1",
                    headerFields: CacheFixtures.fields([
                        "Cache-Control": "max-age=10", "ETag": "\"v1\"", "X-Version": "1",
                    ])),
                .status(
                    304,
                    headerFields: CacheFixtures.fields(
                        ["Cache-Control": "max-age=100", "ETag": "\"v1\"", "X-Version": "2"],
                        date: CacheFixtures.start + 20)),
            ])
        _ = try await harness.send()
        harness.time.advance(by: 20)
        let captured = CacheFixtures.Shared<String?>(nil)
        let page = Page(decisionList: [
            ClosureDecision(name: "peek") { response, _ in
                captured.update { $0 = response.head.headerFields[HTTPField.Name("X-Version")!] }
                return .continue(with: response)
            }
        ])
        let second = try await harness.send(page)
        #expect(second.value == "body-1")
        #expect(second.cacheStatus?.outcome == .revalidated)
        #expect(captured.value == "2")
        let conditional = try #require(harness.mock.recordedRequests.last)
        #expect(conditional.head.headerFields[.ifNoneMatch] == "\"v1\"")
        #expect(harness.log.messages.last?.contains("cache revalidated") == true)
        // The merged max-age=100 makes the entry fresh again: no third request.
        harness.time.advance(by: 50)
        #expect(try await harness.send().cacheStatus?.outcome == .hit)
        #expect(harness.networkCount == 2)
    }

    @Test("row 40: Last-Modified only: If-Modified-Since is sent")
    func revalidatesWithLastModified() async throws {
        let harness = try CacheFixtures.harness()
        let lastModified = CacheFixtures.httpDate(CacheFixtures.start - 1000)
        harness.mock.stub(
            .get, "/page",
            with: [
                .text(
                    "old",
                    headerFields: CacheFixtures.fields(["Cache-Control": "no-cache", "Last-Modified": lastModified])),
                .status(304),
            ])
        _ = try await harness.send()
        let second = try await harness.send()
        #expect(second.value == "old")
        #expect(harness.mock.recordedRequests.last?.head.headerFields[.ifModifiedSince] == lastModified)
    }

    @Test("row 40: heuristic freshness is 10 % of Date − Last-Modified, and none for a URL with a query")
    func heuristicFreshness() async throws {
        let harness = try CacheFixtures.harness()
        let lastModified = CacheFixtures.httpDate(CacheFixtures.start - 1000)  // 10 % = 100 s
        let headers = CacheFixtures.fields(["Last-Modified": lastModified])
        harness.mock.stub(.get, "/page", handler: { _ in .text("plain", headerFields: headers) })
        harness.mock.stub(.get, "/page?q=1", handler: { _ in .text("query", headerFields: headers) })
        _ = try await harness.send()
        _ = try await harness.send(Page(query: ["q": "1"]))
        harness.time.advance(by: 99)
        #expect(try await harness.send().cacheStatus?.outcome == .hit)
        #expect(try await harness.send(Page(query: ["q": "1"])).cacheStatus?.outcome == .miss)
        harness.time.advance(by: 2)
        #expect(try await harness.send().cacheStatus?.outcome == .miss)
    }

    @Test("row 40: Age and Date skew: the age counts the larger of Age + delay and the apparent age")
    func ageAndDateSkew() async throws {
        let harness = try CacheFixtures.harness()
        // The origin says the response is already 50 s old; max-age 60 leaves 10 s.
        harness.mock.stub(
            .get, "/page",
            handler: { _ in
                .text("aged", headerFields: CacheFixtures.fields(["Cache-Control": "max-age=60", "Age": "50"]))
            })
        _ = try await harness.send()
        harness.time.advance(by: 9)
        let hit = try await harness.send()
        #expect(hit.cacheStatus?.outcome == .hit)
        #expect(hit.cacheStatus?.age == .seconds(59))
        harness.time.advance(by: 2)
        #expect(try await harness.send().cacheStatus?.outcome == .miss)
    }

    @Test("Expires minus Date gives the freshness lifetime; an invalid Expires is already stale")
    func expires() async throws {
        let harness = try CacheFixtures.harness()
        let expires = CacheFixtures.httpDate(CacheFixtures.start + 30)
        harness.mock.stub(
            .get, "/page", handler: { _ in .text("e", headerFields: CacheFixtures.fields(["Expires": expires])) })
        harness.mock.stub(
            .get, "/zero", handler: { _ in .text("z", headerFields: CacheFixtures.fields(["Expires": "0"])) })
        _ = try await harness.send()
        _ = try await harness.send(Page(path: "/zero"))
        harness.time.advance(by: 29)
        #expect(try await harness.send().cacheStatus?.outcome == .hit)
        #expect(try await harness.send(Page(path: "/zero")).cacheStatus?.outcome == .miss)
    }

    @Test("row 40: no-cache in the response revalidates every time, even while fresh")
    func noCacheRevalidates() async throws {
        let harness = try CacheFixtures.harness()
        harness.mock.stub(
            .get, "/page",
            handler: { request in
                if request.head.headerFields[.ifNoneMatch] == "\"e\"" { return .status(304) }
                return .text(
                    "nc",
                    headerFields: CacheFixtures.fields(["Cache-Control": "no-cache, max-age=600", "ETag": "\"e\""]))
            })
        _ = try await harness.send()
        #expect(try await harness.send().cacheStatus?.outcome == .revalidated)
        #expect(
            try await harness.send(Page(headers: ["Cache-Control": "no-cache"])).cacheStatus?.outcome == .revalidated)
        #expect(harness.networkCount == 3)
    }

    @Test("row 37: no-store on the response stores nothing")
    func noStoreResponse() async throws {
        let harness = try CacheFixtures.harness()
        harness.mock.stub(
            .get, "/page",
            handler: { _ in
                .text("secret", headerFields: CacheFixtures.fields(["Cache-Control": "no-store, max-age=600"]))
            })
        _ = try await harness.send()
        #expect(harness.cache.count == 0)
        #expect(try await harness.send().cacheStatus?.outcome == .miss)
        #expect(harness.networkCount == 2)
    }

    @Test("row 37: no-store on the request stores nothing and serves nothing")
    func noStoreRequest() async throws {
        let harness = try CacheFixtures.harness()
        harness.mock.stub(
            .get, "/page",
            handler: { _ in .text("x", headerFields: CacheFixtures.fields(["Cache-Control": "max-age=600"])) })
        _ = try await harness.send(Page(headers: ["Cache-Control": "no-store"]))
        #expect(harness.cache.count == 0)
    }

    @Test(
        "row 37: a 304 that says no-store answers the call with the merged head, and the entry goes (RFC 9111 §3)",
        arguments: [false, true])
    func notModifiedWithNoStore(onDisk: Bool) async throws {
        try await CacheFixtures.withHarness(onDisk: onDisk) { harness, directory in
            let later = CacheFixtures.start + 20
            harness.mock.stub(
                .get, "/page",
                with: [
                    .text(
                        "body-1", headerFields: CacheFixtures.fields(["Cache-Control": "max-age=10", "ETag": "\"v1\""])),
                    .status(
                        304,
                        headerFields: CacheFixtures.fields(
                            ["Cache-Control": "no-store", "ETag": "\"v1\"", "X-Version": "2"], date: later)),
                    .text("body-2", headerFields: CacheFixtures.fields(["Cache-Control": "no-store"], date: later)),
                ])
            _ = try await harness.send()
            harness.time.advance(by: 20)
            let version = CacheFixtures.Shared<String?>(nil)
            let versionField = try #require(HTTPField.Name("X-Version"))
            let peek = ClosureDecision(name: "peek") { response, _ in
                version.update { $0 = response.head.headerFields[versionField] }
                return .continue(with: response)
            }
            let revalidated = try await harness.send(Page(decisionList: [peek]))
            #expect(revalidated.value == "body-1" && revalidated.cacheStatus?.outcome == .revalidated)
            #expect(version.value == "2")
            #expect(harness.cache.count == 0, "the entry a no-store 304 answered is still stored")
            if onDisk { #expect(try CacheFixtures.entryFiles(in: directory).isEmpty) }

            // Nothing left to revalidate: the next call is a plain request.
            let next = try await harness.send()
            #expect(next.value == "body-2" && next.cacheStatus?.outcome == .miss)
            #expect(harness.mock.recordedRequests.last?.head.headerFields[.ifNoneMatch] == nil)
        }
    }

    @Test(
        "row 37: an entry whose stored head says no-store is never served, whatever the policy",
        arguments: [CachePolicy.useProtocolRules, .returnCacheElseLoad])
    func storedNoStoreNeverServed(policy: CachePolicy) async throws {
        let store = CacheFixtures.OwnStore()
        let cache = HTTPCache(store: store, now: CacheFixtures.Time().closure)
        let (client, mock) = Fixtures.client { $0.cache = cache }
        mock.stub(.get, "/page", handler: { _ in .text("from the network") })
        try await store.store(
            CacheEntry(
                key: CacheKey(partition: "", url: Fixtures.baseURL.appendingPathComponent("page").absoluteString),
                status: 200,
                headers: [
                    ("Date", CacheFixtures.httpDate(CacheFixtures.start)), ("Cache-Control", "no-store, max-age=600"),
                ],
                body: Data("kept against no-store".utf8),
                requestTime: CacheFixtures.start, responseTime: CacheFixtures.start, vary: [:]))

        let response = try await client.sendWithCacheStatus(Page(cachePolicy: policy))
        #expect(response.value == "from the network")
        #expect(response.cacheStatus?.outcome == .miss)
    }

    @Test(
        "row 37: only cacheable statuses are stored; 206 never; 302/307 only with explicit freshness",
        arguments: [
            (200, "max-age=60", true), (203, "max-age=60", true), (404, "max-age=60", true), (410, "", true),
            (206, "max-age=60", false), (500, "max-age=60", false), (503, "max-age=60", false), (302, "", false),
            (302, "max-age=60", true), (307, "", false), (201, "max-age=60", false),
        ])
    func cacheableStatuses(code: Int, cacheControl: String, stored: Bool) async throws {
        let harness = try CacheFixtures.harness()
        var headers = CacheFixtures.fields(["ETag": "\"s\""])
        if !cacheControl.isEmpty { headers[.cacheControl] = cacheControl }
        if code == 206 { headers[.contentRange] = "bytes 0-1/10" }
        let answer = MockResponse.text("ok", status: code, headerFields: headers)
        harness.mock.stub(.get, "/page", with: answer)
        _ = try? await harness.send(Page(decisionList: []))
        #expect((harness.cache.count == 1) == stored)
    }

    @Test("row 37: unsafe methods are not stored")
    func postNotStored() async throws {
        let harness = try CacheFixtures.harness()
        harness.mock.stub(
            .post, "/page",
            handler: { _ in .text("p", headerFields: CacheFixtures.fields(["Cache-Control": "max-age=600"])) })
        _ = try await harness.send(Page(method: .post, body: .text("x")))
        #expect(harness.cache.count == 0)
    }

    @Test("row 37: a truncated body fails the call and is never stored")
    func truncatedBody() async throws {
        let harness = try CacheFixtures.harness()
        var cut = MockResponse.text(
            String(repeating: "a", count: 100), headerFields: CacheFixtures.fields(["Cache-Control": "max-age=600"]))
        cut.fault = .resetMidBody(afterBytes: 9)
        harness.mock.stub(.get, "/page", with: cut)
        await #expect(throws: CourierError.self) { try await harness.send() }
        #expect(harness.cache.count == 0)
    }

    @Test("row 39: Vary selects the variant by the nominated request header")
    func varyMatches() async throws {
        let harness = try CacheFixtures.harness()
        harness.mock.stub(
            .get, "/page",
            handler: { request in
                let language = request.head.headerFields[.acceptLanguage] ?? "none"
                return .text(
                    language,
                    headerFields: CacheFixtures.fields(["Cache-Control": "max-age=600", "Vary": "Accept-Language"]))
            })
        #expect(try await harness.send(Page(headers: ["Accept-Language": "en"])).value == "en")
        let english = try await harness.send(Page(headers: ["Accept-Language": "en"]))
        #expect(english.value == "en" && english.cacheStatus?.outcome == .hit)
        let french = try await harness.send(Page(headers: ["Accept-Language": "fr"]))
        #expect(french.value == "fr" && french.cacheStatus?.outcome == .miss)
        #expect(try await harness.send(Page(headers: ["Accept-Language": "fr"])).cacheStatus?.outcome == .hit)
        #expect(try await harness.send(Page(headers: ["Accept-Language": "en"])).value == "en")
    }

    @Test("row 39: Vary: * is never served from the cache")
    func varyStar() async throws {
        let harness = try CacheFixtures.harness()
        harness.mock.stub(
            .get, "/page",
            handler: { _ in
                .text("v", headerFields: CacheFixtures.fields(["Cache-Control": "max-age=600", "Vary": "*"]))
            })
        _ = try await harness.send()
        #expect(try await harness.send().cacheStatus?.outcome == .miss)
        #expect(harness.networkCount == 2)
    }

    @Test(
        "row 41: a successful unsafe request invalidates its URI and same-origin Location/Content-Location, not others",
        arguments: [HTTPRequest.Method.post, .put, .patch, .delete])
    func unsafeMethodsInvalidate(method: HTTPRequest.Method) async throws {
        let harness = try CacheFixtures.harness()
        for path in ["/page", "/created", "/described", "/elsewhere"] {
            harness.mock.stub(
                .get, path,
                handler: { _ in .text(path, headerFields: CacheFixtures.fields(["Cache-Control": "max-age=600"])) })
            _ = try await harness.send(Page(path: path))
        }
        harness.mock.stub(
            method, "/page",
            handler: { _ in
                .status(
                    201,
                    headerFields: [
                        .location: "/created", .contentLocation: "https://api.example.com/described",
                    ])
            })
        harness.mock.stub(.get, "/other-origin", with: .status(200))
        _ = try await harness.send(Page(method: method, body: .text("x"), decisionList: []))
        #expect(try await harness.send().cacheStatus?.outcome == .miss)
        #expect(try await harness.send(Page(path: "/created")).cacheStatus?.outcome == .miss)
        #expect(try await harness.send(Page(path: "/described")).cacheStatus?.outcome == .miss)
        #expect(try await harness.send(Page(path: "/elsewhere")).cacheStatus?.outcome == .hit)
    }

    @Test("row 41: a cross-origin Location is not invalidated; a failed unsafe request invalidates nothing")
    func crossOriginLocationKept() async throws {
        let harness = try CacheFixtures.harness()
        let cdn = Server(baseURL: URL(string: "https://cdn.example.com")!)
        harness.mock.stub(
            .get, "/page",
            handler: { _ in .text("p", headerFields: CacheFixtures.fields(["Cache-Control": "max-age=600"])) })
        _ = try await harness.send()
        _ = try await harness.send(Page(server: cdn))
        harness.mock.stub(.post, "/page", with: .status(500))
        _ = try? await harness.send(Page(method: .post, body: .text("x"), decisionList: []))
        #expect(try await harness.send().cacheStatus?.outcome == .hit)
        harness.mock.stub(
            .post, "/other", with: .status(201, headerFields: [.location: "https://cdn.example.com/page"]))
        _ = try await harness.send(Page(method: .post, path: "/other", body: .text("x"), decisionList: []))
        #expect(try await harness.send(Page(server: cdn)).cacheStatus?.outcome == .hit)
        #expect(harness.networkCount == 4)
    }
}
