import CourierCore
import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionTransport {
    /// How a response's body is framed, as far as the transport needs it.
    struct Framing {
        /// The body's length when the bytes read will be exactly `Content-Length` (no `Content-Encoding`).
        var expectedLength: Int64?
        /// The `Content-Length` value, compressed or not.
        var contentLength: Int64?
        /// Whether URLSession decompresses the body (a `Content-Encoding` other than `identity`).
        var isEncoded: Bool
    }

    /// Builds the `URLRequest` for a request head: URL, method, every header field, and a timeout no later than
    /// the deadline.
    ///
    /// Repeated fields are joined into one line (RFC 9110 §5.3), with "; " for `Cookie` (RFC 6265 §5.4), since
    /// `URLRequest` holds one value per name.
    static func makeURLRequest(
        _ head: HTTPRequest,
        deadline: ContinuousClock.Instant?,
        backstop: TimeInterval = 62
    ) throws -> URLRequest {
        guard let url = head.url else {
            throw CourierError(code: .invalidURL, stage: .transport, message: "the request has no absolute URL")
        }
        var request = URLRequest(url: url)
        request.httpMethod = head.method.rawValue
        request.cachePolicy = .reloadIgnoringLocalCacheData
        request.httpShouldHandleCookies = false
        request.timeoutInterval = backstop
        var order: [HTTPField.Name] = []
        var values: [HTTPField.Name: [String]] = [:]
        for field in head.headerFields {
            if values[field.name] == nil { order.append(field.name) }
            values[field.name, default: []].append(field.value)
        }
        for name in order {
            let separator = name == .cookie ? "; " : ", "
            request.setValue(values[name, default: []].joined(separator: separator), forHTTPHeaderField: name.rawName)
        }
        if values[.acceptEncoding] == nil {
            request.setValue(offeredCodings, forHTTPHeaderField: "Accept-Encoding")
        }
        if let deadline {
            // URLSession's timeout counts whole seconds (FoundationNetworking truncates); the transport's own
            // deadline timer fires first, this is a backstop.
            let remaining = ContinuousClock.now.duration(to: deadline).timeInterval
            request.timeoutInterval = min(backstop, max(1, remaining.rounded(.up) + 1))
        }
        return request
    }

    /// Builds the response head from URLSession's response: the status code and every header field.
    ///
    /// URLSession merges repeated fields into one comma-joined value and does not keep their order; the head
    /// carries what URLSession reports.
    static func makeResponseHead(_ response: HTTPURLResponse) throws -> HTTPResponse {
        guard (100...999).contains(response.statusCode) else {
            throw CourierError(
                code: .unexpectedResponse,
                stage: .transport,
                message: "invalid status code \(response.statusCode)"
            )
        }
        var fields = HTTPFields()
        for (key, value) in response.allHeaderFields {
            guard let key = key as? String, let name = HTTPField.Name(key), let value = value as? String else {
                continue
            }
            fields.append(HTTPField(name: name, value: value))
        }
        return HTTPResponse(status: HTTPResponse.Status(code: response.statusCode), headerFields: fields)
    }

    /// Reads the framing of a response; rejects conflicting or malformed `Content-Length` values, and a
    /// `Content-Length` next to a `Transfer-Encoding` (RFC 9112 §6.3: a message with both is a smuggling vector;
    /// FoundationNetworking would frame it by `Content-Length`), and codings no transport decodes
    /// (`ContentCodings`).
    ///
    /// FoundationNetworking accepts `Content-Length: 5` and `Content-Length: 6` in one response and merges them
    /// into `"5, 6"`; a list of identical values is accepted as that value.
    static func framing(of head: HTTPResponse, method: HTTPRequest.Method) throws -> Framing {
        if head.headerFields[.contentLength] != nil, head.headerFields[.transferEncoding] != nil {
            throw CourierError(
                code: .malformedResponse,
                stage: .transport,
                message: "invalid response framing: both Content-Length and Transfer-Encoding",
                response: head
            )
        }
        try ContentCodings.check(head, decodable: decodableCodings)
        var contentLength: Int64?
        if let value = head.headerFields[.contentLength] {
            let values = Set(value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            guard values.count == 1, let text = values.first, let length = Int64(text), length >= 0,
                text.allSatisfy(\.isASCIIDigit)
            else {
                throw CourierError(
                    code: .malformedResponse,
                    stage: .transport,
                    message: "invalid response framing: conflicting or malformed Content-Length \"\(value)\"",
                    response: head
                )
            }
            contentLength = length
        }
        let encoding = head.headerFields[.contentEncoding]?.trimmingCharacters(in: .whitespaces).lowercased()
        let isEncoded = encoding.map { !$0.isEmpty && $0 != "identity" } ?? false
        let hasNoBody =
            method == .head || head.status.kind == .informational || head.status.code == 204
            || head.status.code == 304
        let expectedLength: Int64? = hasNoBody ? 0 : (isEncoded ? nil : contentLength)
        return Framing(expectedLength: expectedLength, contentLength: contentLength, isEncoded: isEncoded)
    }
}

extension URLSessionTransport {
    /// The `Accept-Encoding` a request without one gets: the codings the transport decodes. Left to itself,
    /// FoundationNetworking offers every coding its libcurl was built with (`deflate, gzip, br, zstd` here), and
    /// a server that picked `br` got a response the transport must refuse (`ContentCodings`).
    static var offeredCodings: String {
        #if canImport(FoundationNetworking)
            "gzip, deflate"
        #else
            "gzip, deflate, br"
        #endif
    }

    /// The codings URLSession decodes by itself on this platform (libcurl's `x-gzip` is its `gzip`).
    static var decodableCodings: Set<String> {
        #if canImport(FoundationNetworking)
            ContentCodings.decodable.union(["x-gzip"])
        #else
            ContentCodings.decodable.union(["x-gzip", "br"])
        #endif
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
