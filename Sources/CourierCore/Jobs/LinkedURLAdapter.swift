import Foundation
import HTTPTypes

/// Points the request at a linked URL (a next-page `Link`): its scheme, authority, path and query replace the
/// request's own. Runs after the request's adapters, before the client's (so auth sees the real origin).
///
/// On another origin than the first page's, it also removes the credential headers the request's adapters added
/// (`Authorization`, `Cookie`, an `X-Api-Key` the redactor knows), as a redirect to another origin does: the
/// client's adapters, which run after it, add theirs only where their origin is trusted.
struct LinkedURLAdapter: RequestAdapter {
    let url: URL
    /// The headers to remove: none on the first page's origin.
    var strippedHeaders: [HTTPField.Name] = []

    var name: String { "linkedURL" }

    func adapt(_ request: OutgoingRequest, context: AdapterContext) async throws -> OutgoingRequest {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let scheme = components.scheme?.lowercased(), let host = components.percentEncodedHost
        else {
            throw CourierError(code: .invalidURL, stage: .adapt, message: "the linked URL cannot be parsed")
        }
        var request = request
        var authority = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        if let port = components.port { authority += ":\(port)" }
        var path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { path += "?\(query)" }
        request.head.scheme = scheme
        request.head.authority = authority
        request.head.path = path
        for name in strippedHeaders { request.head.headerFields[name] = nil }
        return request
    }
}
