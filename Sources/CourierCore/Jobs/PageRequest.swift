import Foundation
import HTTPTypes

/// One page's call: the user's request, optionally sent to a linked URL, parsed together with its response head.
///
/// It forwards every requirement of ``Request`` to `base` (``ForwardingRequest``) but its server and adapters, which
/// follow the linked URL, and its parser.
struct PageRequest<Base: Request>: ForwardingRequest {
    typealias Response = PageOutput<Base.Response>

    let base: Base
    /// The linked URL to send `base` to instead of its own path and query.
    let url: URL?
    /// The server `base` goes to (the first page's): a linked page keeps its TLS and proxy options, and on the
    /// same origin its headers (an API key).
    let firstServer: Server?
    /// Whether `url` is on an origin the client does not send credentials to: neither the first page's nor one of
    /// the client's servers (`trusted`). The page is then sent by a client made with ``Client/withoutCredentials()``.
    let goesWithoutCredentials: Bool

    init(base: Base, url: URL?, firstServer: Server? = nil, trusted: [Server] = []) {
        self.base = base
        self.url = url
        self.firstServer = firstServer
        guard let url else {
            goesWithoutCredentials = false
            return
        }
        let origin = Origin(url: url)
        let first = firstServer ?? base.server
        goesWithoutCredentials = first?.origin != origin && !trusted.contains { $0.origin == origin }
    }

    var server: Server? {
        guard let url, let origin = Self.origin(of: url) else { return base.server }
        let first = firstServer ?? base.server
        return Server(
            baseURL: origin,
            environment: first?.environment ?? .production,
            headers: first.map { Origin(url: url) == $0.origin ? $0.headers : [:] } ?? [:],
            tls: first?.tls,
            proxy: first?.proxy
        )
    }
    /// The request's adapters, each on the linked URL and followed by it again: each sees the request as it will be
    /// sent (a signer signs the linked page's URL, not the first page's), and what one changes of the URL is
    /// undone, as after a redirect.
    var adapters: [any RequestAdapter] {
        guard let url else { return base.adapters }
        let link = LinkedURLAdapter(url: url)
        return [link] + base.adapters.map { LinkedPageAdapter(base: $0, link: link) }
    }
    var parser: any ResponseParser<PageOutput<Base.Response>> { HeadParser(base: base.parser) }

    /// `scheme://host:port` of `url`.
    private static func origin(of url: URL) -> URL? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return nil }
        components.percentEncodedPath = ""
        components.percentEncodedQuery = nil
        components.percentEncodedFragment = nil
        return components.url
    }
}

/// A page's value with the heads it came with.
struct PageOutput<Value: Sendable>: Sendable {
    let value: Value
    let response: HTTPResponse
    let request: HTTPRequest
}

/// Parses with the user's parser and keeps the heads beside the value.
private struct HeadParser<Value: Sendable>: ResponseParser {
    let base: any ResponseParser<Value>

    func parse(_ response: ReceivedResponse, context: ParseContext) throws -> PageOutput<Value> {
        PageOutput(
            value: try base.parse(response, context: context), response: response.head, request: context.request)
    }
}
