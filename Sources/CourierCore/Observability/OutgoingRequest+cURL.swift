import Foundation
import HTTPTypes

extension OutgoingRequest {
    /// A `curl` command line that sends this request, with secrets redacted.
    ///
    /// Sensitive header values and query values are replaced by ``Redactor/placeholder``. A body held in memory is
    /// given with `--data-raw`, byte for byte when it holds no secret; with JSON and form values under sensitive keys
    /// redacted otherwise, or cut at 4 KiB, which a comment at the end then says. A streamed or binary body is a
    /// comment. The framing fields (`Content-Length`, `Transfer-Encoding`, `Host`) are left to curl, which works them
    /// out for the body it sends; a `HEAD` is `--head`, so curl does not wait for a body.
    ///
    /// ```
    /// curl -X POST 'https://api.example.com/login' -H 'Authorization: <redacted>' --data-raw '{"user":"a"}'
    /// ```
    public func cURLDescription(redactor: Redactor = .default) -> String {
        let head = redactor.redact(self.head)
        var parts = ["curl"]
        if head.method == .head {
            parts.append("--head")
        } else if head.method != .get || body != nil {
            // Quoted unless it is plain letters and digits: a method token may hold `` ` ``, `$`, `|`, `&` or `'`
            // (RFC 9110 §9.1), which a shell pasting the line would run.
            let method = head.method.rawValue
            let isPlain = method.utf8.allSatisfy {
                (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2D
                    || $0 == 0x5F
            }
            parts.append("-X \(isPlain ? method : Self.quote(method))")
        }
        parts.append(Self.quote(Redactor.displayURL(of: head)))
        for field in head.headerFields where !Self.framingFields.contains(field.name) {
            parts.append("-H \(Self.quote("\(field.name): \(field.value)"))")
        }
        guard let body else { return parts.joined(separator: " ") }
        guard let bytes = body.bufferedBytes else {
            parts.append("--data-binary @- # streamed body, not shown")
            return parts.joined(separator: " ")
        }
        let data = Data(bytes)
        let contentType = head.headerFields[.contentType]
        let limit = 4096
        guard let text = String(bytes: bytes, encoding: .utf8) else {
            parts.append("--data-binary @body.bin # \(bytes.count) bytes of binary content, not shown")
            return parts.joined(separator: " ")
        }
        if bytes.count <= limit, redactor.secrets(inBody: data, contentType: contentType).isEmpty,
            redactor.redactInlinePairs(text) == text
        {
            parts.append("--data-raw \(Self.quote(text))")
        } else {
            let excerpt = redactor.excerpt(of: data, contentType: contentType, limit: limit)
            let note = bytes.count > limit ? "cut at \(limit) of \(bytes.count) bytes" : "secrets redacted"
            parts.append("--data-raw \(Self.quote(excerpt)) # body \(note): not the bytes sent")
        }
        return parts.joined(separator: " ")
    }

    /// Fields curl writes itself for the body it sends; copied, they would contradict an edited or redacted body.
    private static let framingFields: Set<HTTPField.Name> = [.contentLength, .transferEncoding, HTTPField.Name("Host")]
        .compactMap { $0 }.reduce(into: []) { $0.insert($1) }

    private static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
