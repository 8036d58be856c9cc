import HTTPTypes

/// Appends query parameters to the request's URL, encoded with the client's query encoder (or one given here).
///
/// A pair the query already has is not added again (a linked page's URL that echoes a client's `api_key=…`).
///
/// Values are percent-encoded per RFC 3986: only unreserved characters stay literal, so `+`, `;`, `&`, `=` and
/// space reach the server as `%2B`, `%3B`, `%26`, `%3D` and `%20`.
public struct QueryAdapter: SynchronousAdapter {
    /// The parameters.
    public let parameters: Parameters
    /// An encoder for this request only; `nil` uses the client's ``AdapterContext/queryEncoder``.
    public let encoder: URLEncodedFormEncoder?

    /// Creates a query adapter.
    public init(_ parameters: Parameters, encoder: URLEncodedFormEncoder? = nil) {
        self.parameters = parameters
        self.encoder = encoder
    }

    /// `query`.
    public var name: String { "query" }

    /// Appends the encoded parameters to the path, after any query already there, leaving out a pair that query
    /// already has as many times as it has it.
    package func adaptNow(_ request: inout OutgoingRequest, context: AdapterContext) throws {
        let query: String
        do {
            query = try (encoder ?? context.queryEncoder).encode(parameters)
        } catch {
            throw CourierError(
                code: .encodingFailed,
                stage: .adapt,
                message: "could not encode the query: \(error)",
                underlyingError: error
            )
        }
        guard !query.isEmpty else { return }
        let path = request.head.path ?? "/"
        guard let mark = path.firstIndex(of: "?") else {
            request.head.path = path + "?" + query
            return
        }
        // A pair the query has already is not added again: a linked page's URL that echoes the client's
        // `api_key=…` went out with it twice (and a server that echoes every value, once more on every page).
        var present: [Substring: Int] = [:]
        for pair in path[path.index(after: mark)...].split(separator: "&") { present[pair, default: 0] += 1 }
        let added = query.split(separator: "&").filter { pair in
            guard let count = present[pair], count > 0 else { return true }
            present[pair] = count - 1
            return false
        }
        guard !added.isEmpty else { return }
        request.head.path = path + "&" + added.joined(separator: "&")
    }
}

extension RequestAdapter where Self == QueryAdapter {
    /// Appends query parameters, leaving out a pair the URL's query already has.
    public static func query(_ parameters: Parameters, encoder: URLEncodedFormEncoder? = nil) -> QueryAdapter {
        QueryAdapter(parameters, encoder: encoder)
    }
}
