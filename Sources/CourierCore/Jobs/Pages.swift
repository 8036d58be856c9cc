import Foundation
import HTTPTypes

/// The pages of a paginated API as an `AsyncSequence`: each iteration sends one request and yields its ``Page``.
///
/// Created by ``Client/pages(of:next:tags:)``. Pages are fetched one at a time, only when the loop asks for the
/// next one; breaking out of the loop sends nothing more. A failed page ends the sequence with its error.
public struct Pages<R: Request>: AsyncSequence, Sendable {
    /// A page.
    public typealias Element = Page<R>

    let client: Client
    let first: R
    let next: NextPage<R>
    let tags: Set<RequestTag>

    /// Returns an iterator that starts at the first page.
    public func makeAsyncIterator() -> Iterator {
        Iterator(pages: self)
    }

    /// Fetches the pages one by one.
    public struct Iterator: AsyncIteratorProtocol {
        private let pages: Pages
        private var target: NextPage<R>.Target?
        private var previous: Page<R>?
        private var number = 0
        /// The pages fetched so far, by URL (origin and target), the URL linked to and the URL it ended at after
        /// redirects: a link back to one of them is a cycle.
        private var visited: [String: Int] = [:]
        /// The cursors followed so far, with the page each led to: a cursor that comes back is a cycle.
        private var cursors: [String: Int] = [:]
        /// The sequence's own entry among the client's calls in flight, from the first page until the last (or until
        /// the iterator goes): ``Client/cancelAll()`` then stops it between pages too, not only during one.
        private var registration: RequestRegistry.Registration?
        private var ended = false

        init(pages: Pages) {
            self.pages = pages
            self.target = .request(pages.first)
        }

        /// Fetches the next page, or returns `nil` after the last one.
        ///
        /// - Throws: The page's ``CourierError`` or the ``NextPage`` strategy's error (the sequence then ends);
        ///   `CancellationError` when cancelled.
        public mutating func next() async throws -> Page<R>? {
            guard !ended else { return nil }
            do {
                guard let page = try await fetch() else {
                    end()
                    return nil
                }
                return page
            } catch {
                end()
                throw error
            }
        }

        /// The sequence is over: its registration goes, and later calls to ``next()`` return `nil`.
        private mutating func end() {
            ended = true
            registration = nil
        }

        private mutating func fetch() async throws -> Page<R>? {
            if registration == nil {
                registration = pages.client.registry.register(tags: pages.tags)
            }
            if registration?.isCancelled == true { throw CancellationError() }
            if let previous {
                self.previous = nil
                target = try await pages.next.target(previous)
            }
            guard let current = target else { return nil }
            target = nil
            try Task.checkCancellation()
            if registration?.isCancelled == true { throw CancellationError() }
            let call: PageRequest<R>
            switch current {
            case .request(let request, let cursor):
                if let cursor {
                    if let seen = cursors[cursor] { throw cycle("next cursor is the one that led to page \(seen)") }
                    cursors[cursor] = number + 1
                }
                call = PageRequest(base: request, url: nil)
            case .url(let request, let url):
                let key = PageKey.of(url)
                if let seen = visited[key] {
                    // The client's redactor: this error is thrown between calls, where no call's redaction reaches it.
                    let shown = pages.client.configuration.redactor.displayURL(url)
                    throw cycle("next link goes back to page \(seen) (\(shown))")
                }
                // The URL linked to, besides the one a redirect may end at: a link back to either is a cycle.
                visited[key] = number + 1
                // The first page's server: its pins, proxy and (on its origin) headers go with the linked page.
                let first = try pages.client.server(for: request).0
                call = PageRequest(base: request, url: url, firstServer: first, trusted: pages.client.knownServers)
            }
            // On an origin the client does not trust, the page goes to the linked URL exactly: after the client's
            // own adapters too, so that one adding a credential to the query (`api_key=`) does not send it there.
            let client =
                call.goesWithoutCredentials ? pages.client.withoutCredentials(sendingTo: call.url) : pages.client
            let output = try await client.send(call, tags: pages.tags)
            // A `cancelAll` that counted the sequence while this page's call was being set up (before the call was
            // registered, so that one did not reach it): the page is not handed to a reader that was cancelled.
            if registration?.isCancelled == true { throw CancellationError() }
            let url = Self.url(of: output.request)
            if let url {
                let key = PageKey.of(url)
                // A linked page that a redirect took back to an earlier page is that page again: a cycle.
                if case .url = current, let seen = visited[key], seen <= number {
                    throw cycle("next link led, through a redirect, back to page \(seen)")
                }
                visited[key] = number + 1
            }
            number += 1
            var page = Page(
                value: output.value,
                response: output.response,
                request: call.base,
                url: url,
                number: number
            )
            page.linkedURL = call.url
            previous = page
            return page
        }

        /// The error that ends pages forming a cycle: what the last page's next one is, `what`.
        private func cycle(_ what: String) -> CourierError {
            CourierError(
                code: .unexpectedResponse, stage: .decide, message: "page \(number)'s \(what): the pages form a cycle")
        }

        private static func url(of request: HTTPRequest) -> URL? {
            guard let scheme = request.scheme, let authority = request.authority else { return nil }
            return URL(string: "\(scheme)://\(authority)\(request.path ?? "/")")
        }
    }
}

extension Client {
    /// The pages of a paginated API, starting with `first`, as an `AsyncSequence` of ``Page`` values.
    ///
    /// Each page is one ordinary call (adapters, decisions, retries, parsing); `next` reads a page and returns
    /// the request for the following one, or `nil` to end. Cancel the iterating task, call ``cancelAll()``, or use
    /// `tags` with ``cancelAll(tagged:)``, to stop the page in flight, or between pages the next one: the sequence
    /// then throws `CancellationError`.
    ///
    /// ```swift
    /// // A next cursor in the body:
    /// for try await page in client.pages(of: ListItems(), next: .cursor({ $0.nextCursor }) { $0.after($1) }) {
    ///     print(page.value.items)
    /// }
    /// // An RFC 8288 Link header:
    /// for try await page in client.pages(of: ListRepos(), next: .link()) { print(page.value) }
    /// ```
    ///
    /// - Parameters:
    ///   - first: The request for the first page.
    ///   - next: How to find the next page: ``NextPage/cursor(_:applying:)``, ``NextPage/link(relation:)`` or a
    ///     closure.
    ///   - tags: Labels for ``cancelAll(tagged:)`` on every page's call.
    /// - Returns: The sequence; nothing is sent until it is iterated.
    public func pages<R: Request>(of first: R, next: NextPage<R>, tags: Set<RequestTag> = []) -> Pages<R> {
        Pages(client: self, first: first, next: next, tags: tags)
    }
}

/// A page's URL as pages are told apart.
enum PageKey {
    /// `url`'s origin (host case and default port ignored), path and query; no fragment.
    static func of(_ url: URL) -> String {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        let target = (components?.percentEncodedPath ?? "") + "?" + (components?.percentEncodedQuery ?? "")
        return (Origin(url: url).map { "\($0)" } ?? "") + target
    }

    /// Whether the link `url` names the page sent as `sent`: the same page, or the same origin and path with a query
    /// whose every pair `sent` has (the page as its link spells it, before a client adapter added `api_key=…`).
    static func names(_ url: URL, page sent: URL) -> Bool {
        if of(url) == of(sent) { return true }
        guard let link = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let page = URLComponents(url: sent, resolvingAgainstBaseURL: true),
            Origin(url: url) == Origin(url: sent), link.percentEncodedPath == page.percentEncodedPath
        else { return false }
        let pairs = Set((page.percentEncodedQuery ?? "").split(separator: "&"))
        return (link.percentEncodedQuery ?? "").split(separator: "&").allSatisfy(pairs.contains)
    }
}
