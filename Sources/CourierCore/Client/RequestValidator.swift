import Foundation
import HTTPTypes

/// Step 3 of the pipeline: checks that run after every adapter, so no adapter can skip them.
///
/// - the scheme is http or https, and cleartext http only goes to allowed hosts;
/// - the authority has no userinfo;
/// - framing: Courier owns `Content-Length` and `Transfer-Encoding`. Whatever the adapters set is replaced by
///   exactly one correct `Content-Length` for a body of known length (none for an unknown length, which the
///   transport sends chunked), `Content-Length: 0` for a body-less POST, PUT or PATCH, and nothing for other
///   body-less requests. A TRACE request with a body is an error (RFC 9110 §9.3.8);
/// - `Proxy-Authorization` is removed: it is meant for a proxy, which gets it from ``ProxyOptions``, and a header
///   set on the request would reach the origin (in a tunnel, or with no proxy at all);
/// - the connection is the transport's: a `Host` field that names the URL's authority is removed (the transport
///   writes it), another one is an error (URLSession replaces it, HTTP/2 sends the authority, so it would reach the
///   server on one transport and not on another: the server's base URL says where a request goes); `Upgrade` is an
///   error (Courier reads HTTP responses, not a switched protocol); `Connection` may say `close`, `keep-alive`, and
///   `TE` beside a `TE` field (RFC 9110 §10.1.4), and anything else is an error (a token there makes every proxy on
///   the way drop the field it names);
///   `Keep-Alive` and `Proxy-Connection` are removed (HTTP/1.0 leftovers, malformed in HTTP/2); `TE` may only say
///   `trailers`.
enum RequestValidator {
    /// Checks and completes `request`. The cleartext check takes `base`'s answer when the request still goes to
    /// `base`'s authority.
    static func validate(
        _ request: inout OutgoingRequest, cleartextPolicy: CleartextPolicy, base: RequestResolver.Base
    ) throws {
        let head = request.head
        let isCleartext: Bool
        switch head.scheme {
        case "https": isCleartext = false
        case "http": isCleartext = true
        case let scheme? where scheme.lowercased() == "https": isCleartext = false
        case let scheme? where scheme.lowercased() == "http": isCleartext = true
        default: throw invalidURL("the scheme must be http or https")
        }
        guard let authority = head.authority, !authority.isEmpty else {
            throw invalidURL("the request has no host")
        }
        // The base's authority was checked once, as the base was resolved (its host's bytes, a port of 1 to 65535):
        // only another one (an adapter's, a redirect's) is checked here, which saves about 1 µs a call (issue #17's
        // profile). The same storage compares equal at once. Bytes, not `Character`s: a character search breaks the
        // string into graphemes.
        if authority != base.authority {
            guard authority.utf8.allSatisfy(RequestResolver.isHostByte), hasValidPort(authority) else {
                throw invalidAuthority(authority)
            }
        }
        if isCleartext, !(base.allowsCleartext && base.authority == authority) {
            let host = hostPart(of: authority)
            guard cleartextPolicy.allows(host: host) else {
                throw cleartextRefused(host)
            }
        }
        if let path = head.path, let problem = problem(in: path) {
            throw invalidURL(problem)
        }

        // One pass to see whether there is anything to remove (an assignment by name scans the fields each time).
        if request.head.headerFields.contains(where: { isOwned($0.name) }) {
            request.head.headerFields[.proxyAuthorization] = nil
            request.head.headerFields[.contentLength] = nil
            request.head.headerFields[.transferEncoding] = nil
            try checkConnectionFields(&request.head.headerFields, authority: authority, isCleartext: isCleartext)
        }
        if let body = request.body {
            if head.method == .trace {
                throw CourierError(
                    code: .invalidBody, stage: .validate, message: "a TRACE request must not have a body")
            }
            if case .known(let length) = body.length {
                guard length >= 0 else {
                    throw CourierError(
                        code: .invalidBody, stage: .validate,
                        message: "the body declares a negative length (\(length)); declare .unknown to send it chunked")
                }
                request.head.headerFields[.contentLength] = String(length)
            }
        } else if head.method == .post || head.method == .put || head.method == .patch {
            request.head.headerFields[.contentLength] = "0"
        }
    }

    /// What `\(pathSegment:)` writes for an empty value: a percent-encoded NUL, which no path carries on purpose,
    /// refused by ``problem(in:)``.
    static let emptySegmentMarker = "%00"

    /// What is wrong with a request target (path and query), or `nil`: a byte a request line cannot carry, a path
    /// segment that is a percent-encoded dot segment (`%2E`, `%2E%2E`, `.%2E`, `%2E.`), or a dot segment next to a
    /// percent-encoded `/` or `\` (`..%2F`, `%2F..`, `%5C..`). RFC 3986 §6.2.2.2 makes `%2E` equivalent to `.`, and
    /// servers and proxies (nginx, Go's `ServeMux`, WHATWG URL parsers) resolve such a segment like `..`; nginx also
    /// decodes `%2F` before it resolves dot segments and matches its locations (and a `proxy_pass` with a URI
    /// forwards the result): `\(pathSegment: "..")` or `\(pathSegment: "../admin")` would leave the path it was meant
    /// to stay in. One pass over the bytes, which the byte check made anyway.
    @inline(never)
    static func problem(in target: String) -> String? {
        var target = target
        return target.withUTF8 { bytes -> String? in
            var dots = 0
            var encoded = false
            var other = false
            // Whether the segment began after a percent-encoded separator (`%2F`, `%5C`).
            var afterEncodedSeparator = false
            var inQuery = false
            var index = 0
            // Whether the segment that just ended is a dot segment that servers decode into a real one (`%2E`, or
            // `.` after `%2F`); resets the segment's state. `encodedSeparator`: it ends at `%2F` or `%5C`.
            func endsEncodedDotSegment(encodedSeparator: Bool = false) -> Bool {
                defer { (dots, encoded, other, afterEncodedSeparator) = (0, false, false, encodedSeparator) }
                return (encoded || encodedSeparator || afterEncodedSeparator) && !other && (dots == 1 || dots == 2)
            }
            let dotSegment =
                "the path has a percent-encoded dot segment (%2E or %2E%2E), or a dot segment next to a "
                + "percent-encoded '/' or '\\' (..%2F, %2F.., %5C..), which servers decode and resolve as '.' or "
                + "'..': a pathSegment value of '.' or '..', or one with '../' in it, cannot be sent"
            while index < bytes.count {
                let byte = bytes[index]
                if byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: "#") {
                    return "the path contains a space, control character, non-ASCII byte or '#' after adapting"
                }
                index += 1
                if inQuery { continue }
                switch byte {
                case UInt8(ascii: "/"), UInt8(ascii: "?"):
                    if endsEncodedDotSegment() { return dotSegment }
                    inQuery = byte == UInt8(ascii: "?")
                case UInt8(ascii: "."):
                    dots += 1
                case UInt8(ascii: "%") where index + 1 < bytes.count:
                    // The escapes servers decode into path syntax, hex in either case (`| 0x20` lowers a letter).
                    switch (bytes[index], bytes[index + 1] | 0x20) {
                    case (UInt8(ascii: "2"), UInt8(ascii: "e")):  // `.`
                        dots += 1
                        encoded = true
                        index += 2
                    case (UInt8(ascii: "2"), UInt8(ascii: "f")), (UInt8(ascii: "5"), UInt8(ascii: "c")):  // `/`, `\`
                        if endsEncodedDotSegment(encodedSeparator: true) { return dotSegment }
                        index += 2
                    case (UInt8(ascii: "0"), UInt8(ascii: "0")):  // NUL
                        return "the path has an empty pathSegment value, or a percent-encoded NUL (%00): a segment "
                            + "must not be empty ('/users//posts' and '/users/' reach other resources on many servers)"
                    default:
                        other = true
                    }
                default:
                    other = true
                }
            }
            return !inQuery && endsEncodedDotSegment() ? dotSegment : nil
        }
    }

    /// Whether `name` is a field Courier owns or checks: framing, proxy credentials, the connection's fields. By
    /// length first: most fields of a request are none of these, and this runs for each field of every call.
    private static func isOwned(_ name: HTTPField.Name) -> Bool {
        switch name.canonicalName.utf8.count {
        case 2: name == .te
        case 4: name == RequestResolver.host
        case 7: name == .upgrade
        case 10: name == .connection || name == keepAlive
        case 14: name == .contentLength
        case 16: name == proxyConnection
        case 17: name == .transferEncoding
        case 19: name == .proxyAuthorization
        default: false
        }
    }

    private static let keepAlive = HTTPField.Name("Keep-Alive")!
    private static let proxyConnection = HTTPField.Name("Proxy-Connection")!

    /// Checks the connection's fields an adapter or request set (see the type's summary): removes those that go,
    /// throws `invalidHeader` for those that would change what the transport does with the connection.
    @inline(never)
    private static func checkConnectionFields(
        _ fields: inout HTTPFields, authority: String, isCleartext: Bool
    ) throws {
        fields[keepAlive] = nil
        fields[proxyConnection] = nil
        for value in fields[values: RequestResolver.host] {
            guard sameAuthority(value, authority, defaultPort: isCleartext ? 80 : 443) else {
                throw invalidHeader(
                    "the Host header ('\(value)') is not the URL's authority ('\(authority)'): the transport sends "
                        + "the authority (URLSession replaces a Host header, HTTP/2 sends :authority); put the host "
                        + "in the server's base URL")
            }
        }
        fields[RequestResolver.host] = nil
        if fields[.upgrade] != nil {
            throw invalidHeader(
                "an Upgrade header asks the server to switch protocols, which Courier's transports do not follow")
        }
        let hasTE = fields[.te] != nil
        for token in tokens(fields[values: .connection])
        where token != "close" && token != "keep-alive" && !(token == "te" && hasTE) {
            throw invalidHeader(
                "the Connection header may say close, keep-alive, or TE beside a TE header; '\(token)' would make "
                    + "every proxy on the way drop the header it names")
        }
        for token in tokens(fields[values: .te]) where token != "trailers" {
            throw invalidHeader(
                "the TE header may only say trailers; '\(token)' asks for a transfer coding the transports do not "
                    + "decode")
        }
    }

    /// The comma-separated tokens of `values`, lowercased, without their parameters.
    private static func tokens(_ values: [String]) -> [String] {
        values.flatMap { $0.split(separator: ",") }.compactMap { item in
            let token = item.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces).lowercased()
            return token.isEmpty ? nil : token
        }
    }

    /// Whether a `Host` value names `authority`: the same host (case aside, a trailing dot aside) and port (the
    /// scheme's default port when either leaves it out).
    private static func sameAuthority(_ host: String, _ authority: String, defaultPort: Int) -> Bool {
        func split(_ value: String) -> (host: String, port: Int?)? {
            let value = value.trimmingCharacters(in: .whitespaces).lowercased()
            let name = hostPart(of: value)
            let rest = value[name.endIndex...].drop { $0 == "]" }
            var host = String(name)
            if host.hasSuffix(".") { host.removeLast() }
            if rest.isEmpty { return (host, nil) }
            guard rest.first == ":", let port = Int(rest.dropFirst()) else { return nil }
            return (host, port)
        }
        guard let given = split(host), let wanted = split(authority) else { return false }
        return given.host == wanted.host && (given.port ?? defaultPort) == (wanted.port ?? defaultPort)
    }

    private static func invalidHeader(_ message: String) -> CourierError {
        CourierError(code: .invalidHeader, stage: .validate, message: message + "; nothing was sent")
    }

    /// The host of `authority` (`host`, `host:port`, `[v6]` or `[v6]:port`), found by bytes: a `Character` search
    /// breaks the string into graphemes.
    static func hostPart(of authority: String) -> Substring {
        let bytes = authority.utf8
        if bytes.first == UInt8(ascii: "["), let end = bytes.firstIndex(of: UInt8(ascii: "]")) {
            return authority[bytes.index(after: bytes.startIndex)..<end]
        }
        return authority[..<(bytes.firstIndex(of: UInt8(ascii: ":")) ?? bytes.endIndex)]
    }

    /// Whether what follows the host in `authority` (host bytes only) is nothing, or `:` and a port number.
    private static func hasValidPort(_ authority: String) -> Bool {
        let bytes = authority.utf8
        let rest: Substring.UTF8View
        if bytes.first == UInt8(ascii: "[") {
            guard let end = bytes.firstIndex(of: UInt8(ascii: "]")) else { return false }
            rest = authority[bytes.index(after: end)...].utf8
        } else if let colon = bytes.firstIndex(of: UInt8(ascii: ":")) {
            rest = authority[colon...].utf8
        } else {
            return true
        }
        guard let first = rest.first else { return true }
        let digits = rest.dropFirst()
        guard first == UInt8(ascii: ":"), (1...5).contains(digits.count),
            digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return false }
        // Port 0 is no port a server listens on: a connection to it fails as if the server were down, and is retried.
        return (1...65_535).contains(digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) })
    }

    /// What is wrong with an authority that has a byte no host or port has: userinfo (`user:password@`, left out of
    /// the message), or another byte an adapter put there (a `/`, a space), which would make the request line or
    /// `Host` name another target than the connection's.
    @inline(never)
    private static func invalidAuthority(_ authority: String) -> CourierError {
        if authority.utf8.contains(UInt8(ascii: "@")) {
            return invalidURL("the URL carries userinfo (user:password@); send credentials with an adapter instead")
        }
        let shown = authority.filter { $0.isASCII && !$0.isWhitespace && $0 != "\0" }
        let bytes = Array(authority.utf8)
        guard let index = bytes.firstIndex(where: { !RequestResolver.isHostByte($0) }) else {
            return invalidURL("the authority '\(shown)' has a port that is not a number from 1 to 65535")
        }
        let byte = String(bytes[index], radix: 16, uppercase: true)
        return invalidURL(
            "the authority '\(shown)' has a byte no host or port has (0x\(byte.count == 1 ? "0" + byte : byte) at "
                + "byte \(index))")
    }

    /// Not inlined: its message would add to the frame of every call that validates a request (issue #17).
    @inline(never)
    private static func cleartextRefused(_ host: Substring) -> CourierError {
        invalidURL(
            "cleartext http to '\(host)' is not allowed; use https, or allow the host in "
                + "Client.Configuration.cleartextPolicy (.hosts([\"\(host)\"]))")
    }

    private static func invalidURL(_ message: String) -> CourierError {
        CourierError(code: .invalidURL, stage: .validate, message: message)
    }
}
