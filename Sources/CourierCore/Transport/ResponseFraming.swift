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
    package init(
        of head: HTTPResponse, method: HTTPRequest.Method, decodable: Set<String> = ContentCodings.decodable
    ) throws {
        if head.headerFields[.contentLength] != nil, head.headerFields[.transferEncoding] != nil {
            throw CourierError(
                code: .malformedResponse,
                stage: .transport,
                message: "invalid response framing: both Content-Length and Transfer-Encoding",
                response: head
            )
        }
        try ContentCodings.check(head, decodable: decodable)
        var contentLength: Int64?
        if let value = head.headerFields[.contentLength] {
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
            contentLength = length
        }
        let encoding = head.headerFields[.contentEncoding]?.trimmingCharacters(in: .whitespaces).lowercased()
        let isEncoded = encoding.map { !$0.isEmpty && $0 != "identity" } ?? false
        self.expectedLength = Self.hasNoBody(head.status, answering: method) ? 0 : (isEncoded ? nil : contentLength)
        self.contentLength = contentLength
        self.isEncoded = isEncoded
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
