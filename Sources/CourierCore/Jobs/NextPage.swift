import Foundation
import HTTPTypes

/// How a ``Client/pages(of:next:tags:)`` sequence finds the request for the page after one.
///
/// Three ways: a closure that returns the next request or `nil`; ``cursor(_:applying:)`` for a next-cursor field
/// in the body; ``link(relation:)`` for an RFC 8288 `Link: <…>; rel="next"` header.
///
/// ```swift
/// for try await page in client.pages(of: ListItems(), next: .cursor({ $0.nextCursor }) { $0.after($1) }) {
///     items += page.value.items
/// }
/// ```
public struct NextPage<R: Request>: Sendable {
    /// Where the next page is: a request of the same type, or the same request sent to another URL.
    enum Target: Sendable {
        /// A request; with the cursor it was made for, when a cursor strategy made it (a cursor that comes back is a
        /// cycle).
        case request(R, cursor: String? = nil)
        case url(R, URL)
    }

    let target: @Sendable (Page<R>) async throws -> Target?

    init(target: @escaping @Sendable (Page<R>) async throws -> Target?) { self.target = target }

    /// A strategy that calls `next` with each page; returning `nil` ends the sequence.
    ///
    /// - Parameter next: Returns the request for the page after the given one, or `nil` after the last page.
    ///   It may throw to end the sequence with an error.
    public init(_ next: @escaping @Sendable (Page<R>) async throws -> R?) {
        self.init(target: { page in try await next(page).map { .request($0) } })
    }

    /// A strategy for a next-cursor field in the body: the sequence ends when `cursor` returns `nil` or an empty
    /// string, and fails with ``CourierError/Code/unexpectedResponse`` when a cursor comes back that an earlier page
    /// already gave (the pages would form a cycle).
    ///
    /// - Parameters:
    ///   - cursor: Reads the next cursor from a page's value.
    ///   - applying: Returns the request for a cursor, given the page's request and the cursor.
    public static func cursor(
        _ cursor: @escaping @Sendable (R.Response) -> String?,
        applying: @escaping @Sendable (R, String) -> R
    ) -> NextPage {
        NextPage(target: { page in
            guard let next = cursor(page.value), !next.isEmpty else { return nil }
            return .request(applying(page.request, next), cursor: next)
        })
    }

    /// A strategy for the RFC 8288 `Link` header: follows the link with relation `relation` (`next` by default).
    ///
    /// The next page is requested with the same request (method, headers, adapters, decisions, parser) sent to
    /// the link's URL, resolved against the page's URL when relative. The sequence ends when a page has no such
    /// link, or links to itself (however the link spells the page's URL: host case, default port, fragment; or a
    /// query holding only pairs the page was sent with, so a `next` link with no query from `?page=2` ends it).
    /// Credentials follow the client's rules: a bearer token is only sent to the
    /// client's own servers, so a link to another origin gets none.
    ///
    /// - Parameter relation: The link relation to follow, matched case-insensitively.
    /// - Throws (while iterating): ``CourierError/Code/invalidURL`` for a link that is not http(s), carries
    ///   userinfo, or goes from https to http.
    public static func link(relation: String = "next") -> NextPage {
        NextPage(target: { page in
            guard let name = LinkHeader.name,
                let reference = LinkHeader.target(of: page.response.headerFields[values: name], relation: relation),
                let url = URL(string: reference, relativeTo: page.url)?.absoluteURL
            else { return nil }
            // The page itself, however the link spells it (host case, default port, a fragment): the end.
            // The page as its own link named it counts too: the URL sent may have more in its query (a client
            // adapter's `api_key`).
            if let current = page.url, PageKey.names(url, page: current) { return nil }
            if let linked = page.linkedURL, PageKey.of(url) == PageKey.of(linked) { return nil }
            try LinkHeader.check(url, from: page.url)
            return .url(page.request, url)
        })
    }
}
