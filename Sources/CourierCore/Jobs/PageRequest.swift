import Foundation
import HTTPTypes

/// One page's call: the user's request, optionally sent to a linked URL, parsed together with its response head.
///
/// It forwards every requirement of ``Request`` to `base` (`PageRequestForwardingTests` fails when ``Request`` gains
/// one that is not forwarded here).
struct PageRequest<Base: Request>: Request {
    typealias Response = PageOutput<Base.Response>

    let base: Base
    /// The linked URL to send `base` to instead of its own path and query.
    let url: URL?

    var method: HTTPRequest.Method { base.method }
    var path: String { base.path }
    var query: Parameters? { base.query }
    var headers: RequestHeaders { base.headers }
    var body: RequestBody? { base.body }
    var server: Server? {
        guard let url, let origin = Self.origin(of: url) else { return base.server }
        return Server(baseURL: origin, environment: base.server?.environment ?? .production)
    }
    var environment: Server.Environment? { base.environment }
    var authentication: AuthenticationRequirement { base.authentication }
    var timeout: Duration? { base.timeout }
    var maxResponseBodySize: Int? { base.maxResponseBodySize }
    var retryPolicy: RetryPolicy? { base.retryPolicy }
    var cachePolicy: CachePolicy { base.cachePolicy }
    var adapters: [any RequestAdapter] {
        guard let url else { return base.adapters }
        return base.adapters + [LinkedURLAdapter(url: url)]
    }
    var decisions: [any Decision] { base.decisions }
    var requestName: String { base.requestName }
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
