import Courier
import CourierTestServer
import Foundation

/// An article the demo server serves with `Cache-Control: max-age=60` and an ETag, answering `304` to a matching
/// `If-None-Match`.
struct GetArticle: Request {
    typealias Response = String
    var path: String { "/api/article" }
}

/// What the article route sent: full responses and 304s.
struct GetArticleLog: Request {
    typealias Response = String
    var path: String { "/api/article-log" }
}

/// The article route's counts.
actor ArticleLog {
    private(set) var full = 0
    private(set) var notModified = 0

    func record(notModified wasNotModified: Bool) {
        if wasNotModified { notModified += 1 } else { full += 1 }
    }

    var summary: String { "\(full) full, \(notModified) not modified" }
}

/// The demo's "now" for the cache, moved forward instead of waiting a minute.
final class DemoTime: Sendable {
    private let date = LockedBox(Date())

    var now: Date { date.withLock { $0 } }

    func advance(by seconds: TimeInterval) { date.withLock { $0 += seconds } }
}

enum CacheDemoRoute {
    static func install(on server: TestServer) {
        let log = ArticleLog()
        server.register("GET", "/api/article") { request in
            let etag = #""article-v1""#
            let headers = [("Cache-Control", "max-age=60"), ("ETag", etag)]
            if request.header("If-None-Match") == etag {
                await log.record(notModified: true)
                return TestServerResponse(status: 304, headers: headers)
            }
            await log.record(notModified: false)
            return TestServerResponse(status: 200, headers: headers, body: Array("Caching, explained.".utf8))
        }
        server.register("GET", "/api/article-log") { _ in .text(await log.summary) }
    }
}

extension Scenarios {
    static let cache = Scenario(
        number: 8,
        title: "Cache: a second GET served from the cache, then revalidated with an ETag (304)",
        runsAgainstExternalTarget: false
    ) { demo in
        let time = DemoTime()
        let cache = try HTTPCache(storage: .memory(byteLimit: 1 << 20), now: { time.now })
        let client = demo.client { $0.cache = cache }
        let terminal = demo.terminal
        func show(_ result: CachedResponse<String>) {
            let status = result.cacheStatus.map { "\($0), age \($0.age.components.seconds) s" } ?? "no cache"
            terminal.detail("\"\(result.value)\" — \(status)")
        }
        let first = try await client.sendWithCacheStatus(GetArticle())
        show(first)
        let second = try await client.sendWithCacheStatus(GetArticle())
        show(second)
        terminal.detail("61 s later (the cache's clock is moved forward):")
        time.advance(by: 61)
        let third = try await client.sendWithCacheStatus(GetArticle())
        show(third)
        let served = try await demo.client().send(GetArticleLog())
        terminal.detail("the server sent: \(served)")
        return check(first.cacheStatus?.outcome == .miss, "the first GET went to the network", terminal: terminal)
            & check(
                second.cacheStatus?.outcome == .hit && second.value == first.value,
                "the second GET was served from the cache", terminal: terminal)
            & check(
                third.cacheStatus?.outcome == .revalidated && third.value == first.value,
                "once stale, it was revalidated with If-None-Match and the 304 served the stored body",
                terminal: terminal)
            & check(served == "1 full, 1 not modified", "the server sent one body and one 304", terminal: terminal)
    }
}
