import HTTPTypes

/// Sets header fields, replacing any earlier fields of the same names.
///
/// Names and values are validated first: a value with CR, LF, NUL or another control character, or a name that
/// is not an RFC 9110 token, throws ``CourierError/Code/invalidHeader`` and nothing is sent.
public struct HeadersAdapter: SynchronousAdapter {
    /// The fields to set.
    public let headers: RequestHeaders

    /// Creates a headers adapter.
    public init(_ headers: RequestHeaders) { self.headers = headers }

    /// `headers`.
    public var name: String { "headers" }

    /// Sets the fields. A `multipart/*` `Content-Type` without a `boundary` keeps the boundary of the body's own
    /// (a multipart body's parts are framed by it, and a new one is drawn for every attempt, so the caller cannot
    /// know it): `"Content-Type": "multipart/form-data"` next to a multipart body, as code ported from other
    /// libraries writes it, would otherwise send a body no server can split.
    package func adaptNow(_ request: inout OutgoingRequest, context: AdapterContext) throws {
        // The length first: most names are not 12 bytes, and their comparison then lowercases nothing.
        guard headers.contains(where: { $0.name.utf8.count == 12 && $0.name.lowercased() == "content-type" }) else {
            return try HeaderValidation.apply(headers, to: &request.head.headerFields)
        }
        let boundary = request.head.headerFields[.contentType].flatMap(Self.boundary(of:))
        try HeaderValidation.apply(headers, to: &request.head.headerFields)
        if let boundary, let type = request.head.headerFields[.contentType],
            type.lowercased().hasPrefix("multipart/"), Self.boundary(of: type) == nil
        {
            request.head.headerFields[.contentType] = type + "; boundary=" + boundary
        }
    }

    /// The `boundary` parameter of a `Content-Type` value, as written (quotes kept).
    private static func boundary(of contentType: String) -> Substring? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].filter({ $0 != " " && $0 != "\t" }).lowercased() == "boundary" else {
                continue
            }
            return pair[1].drop { $0 == " " || $0 == "\t" }
        }
        return nil
    }
}

extension RequestAdapter where Self == HeadersAdapter {
    /// Sets one header field.
    public static func header(_ name: String, _ value: String) -> HeadersAdapter {
        HeadersAdapter([name: value])
    }

    /// Sets several header fields.
    public static func headers(_ headers: RequestHeaders) -> HeadersAdapter { HeadersAdapter(headers) }
}
