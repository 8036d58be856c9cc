import CourierCore
import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionTransport {
    /// The framing a response head announces (``ResponseFraming``).
    typealias Framing = ResponseFraming

    /// Builds the `URLRequest` for a request head: URL, method, every header field, the `additional` fields the
    /// head does not set, and a timeout no later than the deadline.
    ///
    /// Repeated fields are joined into one line (RFC 9110 §5.3), with "; " for `Cookie` (RFC 6265 §5.4), since
    /// `URLRequest` holds one value per name.
    ///
    /// The fields are set in one assignment of `allHTTPHeaderFields`, under the names as the head spells them. Each
    /// `setValue(_:forHTTPHeaderField:)` of FoundationNetworking capitalizes the name, checks the value character by
    /// character, compares every stored name lowercased and copies the dictionary: about 14,000 instructions per
    /// field, 28,000 of the 90,000 a sequential request cost over raw URLSession in issue #17's count. HTTPTypes has
    /// already checked names and values, and the names are distinct here (by their canonical form), so nothing is
    /// lost.
    static func makeURLRequest(
        _ head: HTTPRequest,
        deadline: ContinuousClock.Instant?,
        backstop: TimeInterval = 62,
        additional: [(name: HTTPField.Name, value: String)] = []
    ) throws -> URLRequest {
        guard let url = head.url else {
            throw CourierError(code: .invalidURL, stage: .transport, message: "the request has no absolute URL")
        }
        var request = URLRequest(url: url)
        request.httpMethod = head.method.rawValue
        request.cachePolicy = .reloadIgnoringLocalCacheData
        request.httpShouldHandleCookies = false
        request.timeoutInterval = backstop
        // One line per name, in the order names first appear; a short list searched linearly (a request has a few
        // fields, and hashing each name cost more than comparing it).
        var lines: [(name: HTTPField.Name, value: String)] = []
        lines.reserveCapacity(head.headerFields.count + 1 + additional.count)
        for field in head.headerFields {
            if let index = lines.firstIndex(where: { $0.name == field.name }) {
                lines[index].value += (field.name == .cookie ? "; " : ", ") + field.value
            } else {
                lines.append((field.name, field.value))
            }
        }
        if !lines.contains(where: { $0.name == .acceptEncoding }) {
            lines.append((.acceptEncoding, offeredCodings))
        }
        for field in additional where !lines.contains(where: { $0.name == field.name }) {
            lines.append(field)
        }
        var fields: [String: String] = [:]
        fields.reserveCapacity(lines.count)
        for line in lines { fields[line.name.rawName] = line.value }
        request.allHTTPHeaderFields = fields
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
