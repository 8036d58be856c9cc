import Foundation
import HTTPTypes

/// Step 1 of the pipeline: the server's base URL and the request's path become the request head.
enum RequestResolver {
    static func resolve(path: String, on server: Server) throws -> OutgoingRequest {
        guard let components = URLComponents(url: server.baseURL, resolvingAgainstBaseURL: false) else {
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
        guard let host = components.percentEncodedHost, !host.isEmpty else {
            throw invalid("the base URL has no host")
        }
        guard host.utf8.allSatisfy(isHostByte) else {
            throw invalid("the base URL's host contains characters a host cannot have")
        }
        var authority = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        if let port = components.port {
            authority += ":\(port)"
        }

        var basePath = components.percentEncodedPath
        while basePath.hasSuffix("/") { basePath.removeLast() }
        var requestPath = PercentEncoding.encodePath(path)
        if !requestPath.hasPrefix("/") { requestPath = "/" + requestPath }
        let fullPath = basePath + requestPath

        var head = HTTPRequest(method: .get, scheme: scheme, authority: authority, path: fullPath)
        try HeaderValidation.apply(server.headers, to: &head.headerFields)
        return OutgoingRequest(head: head)
    }

    private static func invalid(_ message: String) -> CourierError {
        CourierError(code: .invalidURL, stage: .resolve, message: message)
    }

    /// RFC 3986 reg-name and IP-literal characters (percent-encoded hosts allowed).
    private static func isHostByte(_ byte: UInt8) -> Bool {
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
    /// `/`, `?`, `#`, `%` and every other character outside RFC 3986's segment characters are encoded, once:
    /// `"/files/\(pathSegment: "../admin")"` is `/files/..%2Fadmin`, and `%2F` becomes `%252F`.
    public mutating func appendInterpolation(pathSegment value: some CustomStringConvertible) {
        appendLiteral(PercentEncoding.encode(value.description, allowing: .pathSegment))
    }
}
