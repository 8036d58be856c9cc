import CourierTesting
import Foundation
import HTTPTypes
import Testing

@testable import CourierCore

/// A request that sets every requirement of `Request` to something other than its default.
private struct Everything: Request {
    typealias Response = String
    var method: HTTPRequest.Method { .patch }
    var path: String { "/everything" }
    var query: Parameters? { ["q": "1"] }
    var headers: RequestHeaders { ["X-Everything": "yes"] }
    var body: RequestBody? { .text("body") }
    var server: Server? { Server(baseURL: URL(fileURLWithPath: "/"), environment: "elsewhere") }
    var environment: Server.Environment? { .staging }
    var authentication: AuthenticationRequirement { .required }
    var timeout: Duration? { .seconds(7) }
    var maxResponseBodySize: Int? { 77 }
    var retryPolicy: RetryPolicy? { .disabled }
    var cachePolicy: CachePolicy { .bypass }
    var lane: RequestLane { .priority }
    var adapters: [any RequestAdapter] { [UserAgentAdapter("everything")] }
    var decisions: [any Decision] { [] }
    var requestName: String { "everythingOperation" }
}

@Suite("Pagination forwards every requirement of Request")
struct PageRequestForwardingTests {
    /// The requirements this test checks; it fails when `Request` gains one that is not listed (and so maybe not
    /// forwarded by `PageRequest`).
    static let checked: Set<String> = [
        "method", "path", "query", "headers", "body", "server", "environment", "authentication", "timeout",
        "maxResponseBodySize", "retryPolicy", "cachePolicy", "lane", "adapters", "decisions", "parser", "requestName",
    ]

    @Test("a page's request answers every requirement as the user's request does")
    func forwardsEverything() {
        let base = Everything()
        let page = PageRequest(base: base, url: nil)
        #expect(page.method == base.method)
        #expect(page.path == base.path)
        #expect("\(String(describing: page.query))" == "\(String(describing: base.query))")
        #expect(page.headers == base.headers)
        #expect("\(String(describing: page.body))" == "\(String(describing: base.body))")
        #expect(page.server == base.server)
        #expect(page.environment == base.environment)
        #expect(page.authentication == base.authentication)
        #expect(page.timeout == base.timeout)
        #expect(page.maxResponseBodySize == base.maxResponseBodySize)
        #expect("\(String(describing: page.retryPolicy))" == "\(String(describing: base.retryPolicy))")
        #expect(page.cachePolicy == base.cachePolicy)
        #expect(page.lane == base.lane)
        #expect(page.adapters.map(\.name) == base.adapters.map(\.name))
        #expect(page.decisions.map(\.name) == base.decisions.map(\.name))
        #expect(page.requestName == "everythingOperation")
    }

    @Test("the list above is every requirement Request declares")
    func listIsComplete() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/CourierCore/Request/Request.swift")
        let source = try String(contentsOf: file, encoding: .utf8)
        let start = try #require(source.range(of: "public protocol Request: Sendable {"))
        let end = try #require(source.range(of: "\n}\n", range: start.upperBound..<source.endIndex))
        let body = source[start.upperBound..<end.lowerBound]
        let declared = Set(
            body.split(separator: "\n").compactMap { line -> String? in
                let text = line.trimmingCharacters(in: .whitespaces)
                guard text.hasPrefix("var "), let colon = text.firstIndex(of: ":") else { return nil }
                return String(text[text.index(text.startIndex, offsetBy: 4)..<colon])
            })
        #expect(declared == Self.checked, "Request declares \(declared.subtracting(Self.checked)) unchecked")
    }
}
