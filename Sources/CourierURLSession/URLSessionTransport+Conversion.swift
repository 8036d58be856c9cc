import CourierCore
import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionTransport {
    /// The framing a response head announces (``ResponseFraming``).
    typealias Framing = ResponseFraming

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

    /// Reads the framing of a response (``ResponseFraming``), with the codings this platform's URLSession decodes.
    ///
    /// FoundationNetworking accepts `Content-Length: 5` and `Content-Length: 6` in one response and merges them
    /// into `"5, 6"`, which is refused; a list of identical values is accepted as that value.
    static func framing(of head: HTTPResponse, method: HTTPRequest.Method) throws -> Framing {
        try ResponseFraming(of: head, method: method, decodable: decodableCodings)
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
