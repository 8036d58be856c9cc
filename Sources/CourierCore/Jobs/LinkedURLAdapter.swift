import Foundation
import HTTPTypes

/// Points the request at a linked URL (a next-page `Link`): its scheme, authority, path and query replace the
/// request's own. Runs before and after each of the request's adapters, before the client's (so auth sees the real
/// origin), and on an origin the client does not trust after the client's too.
///
/// A page on an origin the client does not trust (neither the first page's nor one of the client's servers) is sent
/// by a client made with ``Client/withoutCredentials()``: the pipeline removes the credential headers every adapter
/// added (`Authorization`, `Cookie`, an `X-Api-Key` the redactor knows, a client adapter's fixed header included), as
/// after a redirect to another origin.
struct LinkedURLAdapter: RequestAdapter {
    /// The link's scheme, authority and path with its query, parsed once (the adapter runs around each of a linked
    /// page's own adapters); `nil` when the link cannot be parsed.
    private let target: (scheme: String, authority: String, path: String)?

    init(url: URL) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let scheme = components.scheme?.lowercased(), let host = RequestResolver.wireHost(of: components)
        else {
            target = nil
            return
        }
        var authority = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        if let port = components.port { authority += ":\(port)" }
        var path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { path += "?\(query)" }
        target = (scheme, authority, path)
    }

    var name: String { "linkedURL" }

    func adapt(_ request: OutgoingRequest, context: AdapterContext) async throws -> OutgoingRequest {
        guard let target else {
            throw CourierError(code: .invalidURL, stage: .adapt, message: "the linked URL cannot be parsed")
        }
        var request = request
        request.head.scheme = target.scheme
        request.head.authority = target.authority
        request.head.path = target.path
        return request
    }
}

/// One of a linked page's request adapters: runs `base`, then points the request at the link again (see
/// ``PageRequest``'s adapters). Named as `base`, so the trace shows the request's own adapters.
struct LinkedPageAdapter: RequestAdapter {
    let base: any RequestAdapter
    let link: LinkedURLAdapter

    var name: String { base.name }

    func adapt(_ request: OutgoingRequest, context: AdapterContext) async throws -> OutgoingRequest {
        try await link.adapt(try await base.adapt(request, context: context), context: context)
    }
}
