import Foundation
package import HTTPTypes

/// How a response's body is framed, read from its head: what every transport checks before it hands a body over.
///
/// Rejects conflicting or malformed `Content-Length` values, a `Content-Length` next to a `Transfer-Encoding`
/// (RFC 9112 §6.3: a message with both is a smuggling vector), and codings the transport cannot decode
/// (``ContentCodings``). A list of identical `Content-Length` values (`"5, 5"`, as URLSession merges repeated fields)
/// is that value.
package struct ResponseFraming: Sendable {
    /// The body's length when the bytes read will be exactly `Content-Length` (no `Content-Encoding`), and 0 for
    /// a response that has no body (to a HEAD; 1xx, 204, 304: RFC 9110 §6.4.1).
    package var expectedLength: Int64?
    /// The `Content-Length` value, compressed or not.
    package var contentLength: Int64?
    /// Whether the body arrives decoded from a `Content-Encoding` other than `identity`.
    package var isEncoded: Bool

    /// Whether a response with `status` to a `method` request has no body, whatever its `Content-Length` says: to a
    /// HEAD; 1xx, 204, 304 (RFC 9110 §6.4.1).
    package static func hasNoBody(_ status: HTTPResponse.Status, answering method: HTTPRequest.Method) -> Bool {
        let code = status.code
        return method == .head || code == 204 || code == 304 || (100..<200).contains(code)
    }

    /// Reads the framing of `head`, the answer to a `method` request, for a transport that decodes `decodable`.
    ///
    /// One pass over the fields finds the three that frame the body; the codings are checked only when there is a
    /// `Content-Encoding`, and a single all-digit `Content-Length` is read without splitting it. Looked up by name,
    /// each field was a search and a join of its values: eight lookups cost about 17,000 instructions per response
    /// (issue #17's count on the URLSession transport).
    package init(
        of head: HTTPResponse, method: HTTPRequest.Method, decodable: Set<String> = ContentCodings.decodable
    ) throws {
        var lengths: [String] = []
        var hasTransferEncoding = false
        var hasContentEncoding = false
        for field in head.headerFields {
            switch field.name {
            case .contentLength: lengths.append(field.value)
            case .transferEncoding: hasTransferEncoding = true
            case .contentEncoding: hasContentEncoding = true
            default: continue
            }
        }
        if !lengths.isEmpty, hasTransferEncoding {
            throw CourierError(
                code: .malformedResponse,
                stage: .transport,
                message: "invalid response framing: both Content-Length and Transfer-Encoding",
                response: head
            )
        }
        var isEncoded = false
        if hasContentEncoding {
            try ContentCodings.check(head, decodable: decodable)
            let encoding = head.headerFields[.contentEncoding]?.trimmingCharacters(in: .whitespaces).lowercased()
            isEncoded = encoding.map { !$0.isEmpty && $0 != "identity" } ?? false
        }
        var contentLength: Int64?
        if lengths.count == 1, let length = Self.digits(lengths[0]) {
            contentLength = length
        } else if !lengths.isEmpty {
            contentLength = try Self.contentLength(listed: lengths.joined(separator: ", "), head: head)
        }
        self.expectedLength = Self.hasNoBody(head.status, answering: method) ? 0 : (isEncoded ? nil : contentLength)
        self.contentLength = contentLength
        self.isEncoded = isEncoded
    }

    /// `value` as a length when it is one to 18 ASCII digits (no sign, no space), else `nil`.
    private static func digits(_ value: String) -> Int64? {
        var length: Int64 = 0
        var count = 0
        for byte in value.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), count < 18 else { return nil }
            length = length * 10 + Int64(byte - UInt8(ascii: "0"))
            count += 1
        }
        return count == 0 ? nil : length
    }

    /// The length a `Content-Length` list gives (`"5, 5"`, as URLSession merges repeated fields, is 5); throws
    /// ``CourierError/Code/malformedResponse`` for conflicting or malformed values.
    private static func contentLength(listed value: String, head: HTTPResponse) throws -> Int64 {
        let values = Set(value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        guard values.count == 1, let text = values.first, text.allSatisfy(\.isASCIIDigit),
            let length = Int64(text), length >= 0
        else {
            throw CourierError(
                code: .malformedResponse,
                stage: .transport,
                message: "invalid response framing: conflicting or malformed Content-Length \"\(value)\"",
                response: head
            )
        }
        return length
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
