import Foundation
import HTTPTypes

/// Step 1 of the pipeline: the server's base URL and the request's path become the request head.
enum RequestResolver {
    /// A server's base URL taken apart once: what every request to it starts from.
    struct Base: Sendable {
        let scheme: String
        let authority: String
        let path: String
        let headers: HTTPFields
        /// Whether the cleartext policy the base was resolved with lets `http` reach ``authority``'s host: the
        /// validator's answer for every request that keeps this authority, worked out once.
        let allowsCleartext: Bool
    }

    /// Checks and takes apart `server`'s base URL (the client does this once per server).
    static func base(of server: Server, cleartextPolicy: CleartextPolicy) throws -> Base {
        // Resolved against its own base, if it has one (`URL(string: "v2/", relativeTo: root)`), as `Origin` does.
        guard let components = URLComponents(url: server.baseURL, resolvingAgainstBaseURL: true) else {
            throw invalid("the base URL of the \(server.environment) server cannot be parsed")
        }
        guard let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw invalid("the base URL's scheme must be http or https")
        }
        guard components.percentEncodedUser == nil, components.percentEncodedPassword == nil else {
            throw invalid(
                "the base URL carries userinfo (user:password@); send credentials with an adapter instead"
            )
        }
        guard let host = wireHost(of: components), !host.isEmpty else {
            throw invalid("the base URL has no host")
        }
        guard host.utf8.allSatisfy(isHostByte) else {
            throw invalid("the base URL's host contains characters a host cannot have")
        }
        var authority = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        if let port = components.port {
            // URLComponents takes any number; past 65535 the call failed in the transport, as an unreachable server.
            guard (1...65_535).contains(port) else { throw invalid("the base URL's port \(port) is not 1 to 65535") }
            authority += ":\(port)"
        }
        var basePath = components.percentEncodedPath
        while basePath.hasSuffix("/") { basePath.removeLast() }
        var headers = HTTPFields()
        do {
            try HeaderValidation.apply(server.headers, to: &headers)
        } catch var error as CourierError {
            // The server's configuration, not an adapter's doing: say so, and where.
            error.stage = .resolve
            error.message = "the \(server.environment) server's headers: \(error.message ?? "\(error.code)")"
            throw error
        }
        return Base(
            scheme: scheme, authority: authority, path: basePath, headers: headers,
            allowsCleartext: cleartextPolicy.allows(host: RequestValidator.hostPart(of: authority)))
    }

    /// The request head for `path` on a resolved base.
    static func resolve(path: String, on base: Base) -> OutgoingRequest {
        var requestPath = PercentEncoding.encodePath(path)
        // An empty path is the base URL itself (`https://example.com/graphql`, not `/graphql/`, which many routers
        // answer with a 404 or a redirect), or `/` when the base has no path; `"/"` asks for the slash.
        let isBaseItself = requestPath.isEmpty && !base.path.isEmpty
        if !isBaseItself, !requestPath.hasPrefix("/") {
            requestPath = "/" + requestPath
        }
        let head = HTTPRequest(
            method: .get,
            scheme: base.scheme,
            authority: base.authority,
            path: base.path + requestPath,
            headerFields: base.headers
        )
        return OutgoingRequest(head: head)
    }

    private static func invalid(_ message: String) -> CourierError {
        CourierError(code: .invalidURL, stage: .resolve, message: message)
    }

    /// RFC 3986 reg-name and IP-literal characters (percent-encoded hosts allowed).
    static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "%"),
            UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"):
            true
        default:
            false
        }
    }
}

extension DefaultStringInterpolation {
    /// Interpolates `value` as exactly one percent-encoded path segment.
    ///
    /// `/`, `?`, `#`, `%`, `;` and every other character outside RFC 3986's segment characters are encoded, once:
    /// `"/files/\(pathSegment: "a/b")"` is `/files/a%2Fb`, and `%2F` becomes `%252F`. A value that is exactly `.`
    /// or `..` has no encoding a server will not read as a dot segment (RFC 3986 §6.2.2.2 makes `%2E` equal to `.`),
    /// so it is encoded as `%2E` / `%2E%2E` and the call fails with ``CourierError/Code/invalidURL`` before anything
    /// is sent, rather than reaching the path's parent. So does a value with a `.` or `..` part between slashes
    /// (`../admin`, `a/..`): nginx decodes `..%2Fadmin` into `../admin` before it resolves dot segments. An empty value would leave no segment at all
    /// (`/users//posts`, which servers that merge slashes route to `/users/posts`, or `/users/`, the collection): it
    /// is written `%00`, which the call refuses the same way.
    public mutating func appendInterpolation(pathSegment value: some CustomStringConvertible) {
        let text = value.description
        if text == "." || text == ".." {
            // A dot segment would be removed by RFC 3986 normalisation and move the request elsewhere.
            appendLiteral(String(repeating: "%2E", count: text.count))
        } else if text.isEmpty {
            appendLiteral(RequestValidator.emptySegmentMarker)
        } else {
            appendLiteral(PercentEncoding.encode(text, allowing: .pathSegmentValue))
        }
    }
}

extension RequestResolver {
    /// The host of `components` as it goes on the wire: an internationalized name in its ASCII form
    /// (`xn--bcher-kva.test` for `bücher.test`), which DNS, TLS's server name and the `Host` header need; `nil`
    /// when there is none.
    ///
    /// Foundation's `percentEncodedHost` gives such a name as percent-encoded UTF-8 (`b%C3%BCcher.test`), a name
    /// no resolver finds. A host written percent-encoded in the URL is the same name, so it is decoded and encoded
    /// the same way, as the WHATWG URL standard does.
    static func wireHost(of components: URLComponents) -> String? {
        guard let host = components.encodedHost else { return nil }
        guard host.contains("%"), !host.hasPrefix("["), let decoded = host.removingPercentEncoding,
            decoded.unicodeScalars.contains(where: { !$0.isASCII })
        else { return host }
        var named = URLComponents()
        named.host = decoded
        return named.encodedHost ?? host
    }

    /// Resolves an absolute redirect target; the server's own headers are kept only on the server's origin.
    static func resolve(_ url: URL, serverHeadersFrom server: Server) throws -> OutgoingRequest {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = wireHost(of: components), !host.isEmpty, host.utf8.allSatisfy(isHostByte),
            components.percentEncodedUser == nil, components.percentEncodedPassword == nil,
            components.port.map({ (1...65_535).contains($0) }) ?? true
        else {
            throw CourierError(code: .invalidRedirect, stage: .resolve, message: "the redirect target is not usable")
        }
        var authority = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        if let port = components.port { authority += ":\(port)" }
        var path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { path += "?" + query }
        if let problem = RequestValidator.problem(in: path) {
            // The validator would refuse it as the caller's `invalidURL`; the target is the server's.
            throw CourierError(
                code: .invalidRedirect, stage: .resolve,
                message: "the redirect target's path is not sent as it is: \(problem)")
        }
        var head = HTTPRequest(method: .get, scheme: scheme, authority: authority, path: path)
        if Origin(url: url) == server.origin {
            try HeaderValidation.apply(server.headers, to: &head.headerFields)
        }
        return OutgoingRequest(head: head)
    }

    /// Where a redirect sends the call, and how: put on the request after each adapter.
    struct RedirectTarget: Sendable {
        let method: HTTPRequest.Method
        let scheme: String?
        let authority: String?
        let path: String?

        /// The target of a redirect with `method`, as ``RequestResolver/resolve(_:serverHeadersFrom:)`` resolved its
        /// URL into `head`.
        init(method: HTTPRequest.Method, resolved head: HTTPRequest) {
            self.method = method
            scheme = head.scheme
            authority = head.authority
            path = head.path
        }

        /// Puts the redirect's URL back on `request` (a `Host` field named the first target: it goes), and, when the
        /// body is dropped (``CallRecord/bodyDropped``), the redirect's method, dropping the body and its content
        /// headers.
        ///
        /// A redirect that keeps the body (307, 308, a 301 or 302 after a `PUT`) keeps the method the adapters build:
        /// an adapter that sends a `PATCH` as a `POST` with `X-HTTP-Method-Override` still sees the `PATCH`.
        func apply(to request: inout OutgoingRequest, droppingBody dropsBody: Bool) {
            request.head.scheme = scheme
            request.head.authority = authority
            request.head.path = path
            request.head.headerFields[RequestResolver.host] = nil
            guard dropsBody else { return }
            request.head.method = method
            request.body = nil
            for name in [HTTPField.Name.contentType, .contentEncoding, .contentLength, .transferEncoding] {
                request.head.headerFields[name] = nil
            }
            request.head.headerFields[.contentLanguage] = nil
        }
    }

    /// `Host`, which swift-http-types leaves out of its names (``HTTPRequest/authority`` says it).
    static let host = HTTPField.Name("Host")!

    /// Removes every credential header, and every header the redactor treats as sensitive.
    static func stripCredentials(from fields: inout HTTPFields, redactor: Redactor) {
        fields.removeAll { redactor.isOriginBound($0.name) }
    }
}
