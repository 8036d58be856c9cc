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
///   set on the request would reach the origin (in a tunnel, or with no proxy at all).
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
        // Bytes, not `Character`s: a character search breaks the string into graphemes (1 % of a call, issue #17).
        guard !authority.utf8.contains(UInt8(ascii: "@")) else {
            throw invalidURL("the URL carries userinfo (user:password@); send credentials with an adapter instead")
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
        let hasRemovable = request.head.headerFields.contains { field in
            field.name == .proxyAuthorization || field.name == .contentLength || field.name == .transferEncoding
        }
        if hasRemovable {
            request.head.headerFields[.proxyAuthorization] = nil
            request.head.headerFields[.contentLength] = nil
            request.head.headerFields[.transferEncoding] = nil
        }
        if let body = request.body {
            if head.method == .trace {
                throw CourierError(
                    code: .invalidBody, stage: .validate, message: "a TRACE request must not have a body")
            }
            if case .known(let length) = body.length {
                request.head.headerFields[.contentLength] = String(length)
            }
        } else if head.method == .post || head.method == .put || head.method == .patch {
            request.head.headerFields[.contentLength] = "0"
        }
    }

    /// What is wrong with a request target (path and query), or `nil`: a byte a request line cannot carry, or a
    /// path segment that is a percent-encoded dot segment (`%2E`, `%2E%2E`, `.%2E`, `%2E.`). RFC 3986 §6.2.2.2 makes
    /// `%2E` equivalent to `.`, and servers and proxies (nginx, Go's `ServeMux`, WHATWG URL parsers) resolve such a
    /// segment like `..`: `\(pathSegment: "..")` would leave the path it was meant to stay in. One pass over the
    /// bytes, which the byte check made anyway.
    /// What `\(pathSegment:)` writes for an empty value: a percent-encoded NUL, which no path carries on purpose,
    /// refused by ``problem(in:)``.
    static let emptySegmentMarker = "%00"

    @inline(never)
    static func problem(in target: String) -> String? {
        var target = target
        return target.withUTF8 { bytes -> String? in
            var dots = 0
            var encoded = false
            var other = false
            var inQuery = false
            var index = 0
            // Whether the segment that just ended is an encoded dot segment; resets the segment's state.
            func endsEncodedDotSegment() -> Bool {
                defer { (dots, encoded, other) = (0, false, false) }
                return encoded && !other && (dots == 1 || dots == 2)
            }
            let dotSegment =
                "the path has a percent-encoded dot segment (%2E or %2E%2E), which servers resolve as "
                + "'.' or '..': a pathSegment value of '.' or '..' cannot be sent"
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
                case UInt8(ascii: "%")
                where index + 1 < bytes.count && bytes[index] == UInt8(ascii: "2")
                    && (bytes[index + 1] == UInt8(ascii: "E") || bytes[index + 1] == UInt8(ascii: "e")):
                    dots += 1
                    encoded = true
                    index += 2
                case UInt8(ascii: "%")
                where index + 1 < bytes.count && bytes[index] == UInt8(ascii: "0")
                    && bytes[index + 1] == UInt8(ascii: "0"):
                    return "the path has an empty pathSegment value, or a percent-encoded NUL (%00): a segment must "
                        + "not be empty ('/users//posts' and '/users/' reach other resources on many servers)"
                default:
                    other = true
                }
            }
            return !inQuery && endsEncodedDotSegment() ? dotSegment : nil
        }
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
