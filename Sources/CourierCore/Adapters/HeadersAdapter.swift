import HTTPTypes

/// Sets header fields, replacing any earlier fields of the same names.
///
/// Names and values are validated first: a value with CR, LF, NUL or another control character, or a name that
/// is not an RFC 9110 token, throws ``CourierError/Code/invalidHeader`` and nothing is sent.
public struct HeadersAdapter: InPlaceAdapter {
    /// The fields to set.
    public let headers: RequestHeaders

    /// Creates a headers adapter.
    public init(_ headers: RequestHeaders) { self.headers = headers }

    /// `headers`.
    public var name: String { "headers" }

    /// Sets the fields.
    public func adapt(_ request: inout OutgoingRequest, context: AdapterContext) async throws {
        try HeaderValidation.apply(headers, to: &request.head.headerFields)
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
