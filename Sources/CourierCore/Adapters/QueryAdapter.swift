import HTTPTypes

/// Appends query parameters to the request's URL, encoded with the client's query encoder (or one given here).
///
/// Values are percent-encoded per RFC 3986: only unreserved characters stay literal, so `+`, `;`, `&`, `=` and
/// space reach the server as `%2B`, `%3B`, `%26`, `%3D` and `%20`.
public struct QueryAdapter: InPlaceAdapter {
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

    /// Appends the encoded parameters to the path, after any query already there.
    public func adapt(_ request: inout OutgoingRequest, context: AdapterContext) async throws {
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
        request.head.path = path + (path.contains("?") ? "&" : "?") + query
    }
}

extension RequestAdapter where Self == QueryAdapter {
    /// Appends query parameters.
    public static func query(_ parameters: Parameters, encoder: URLEncodedFormEncoder? = nil) -> QueryAdapter {
        QueryAdapter(parameters, encoder: encoder)
    }
}
