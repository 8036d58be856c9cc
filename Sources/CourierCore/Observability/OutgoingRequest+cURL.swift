import Foundation
import HTTPTypes

extension OutgoingRequest {
    /// A `curl` command line that sends this request, with secrets redacted.
    ///
    /// Sensitive header values and query values are replaced by ``Redactor/placeholder``; a body held in memory
    /// is shown (JSON and form values under sensitive keys redacted), a streamed body as a comment.
    ///
    /// ```
    /// curl -X POST 'https://api.example.com/login' -H 'Authorization: <redacted>' --data-binary '{"user":"a"}'
    /// ```
    public func cURLDescription(redactor: Redactor = .default) -> String {
        let head = redactor.redact(self.head)
        var parts = ["curl"]
        if head.method != .get || body != nil { parts.append("-X \(head.method.rawValue)") }
        parts.append(Self.quote(Redactor.displayURL(of: head)))
        for field in head.headerFields {
            parts.append("-H \(Self.quote("\(field.name): \(field.value)"))")
        }
        if let body {
            if let bytes = body.bufferedBytes {
                let excerpt = redactor.excerpt(
                    of: Data(bytes),
                    contentType: head.headerFields[.contentType],
                    limit: 4096
                )
                parts.append("--data-binary \(Self.quote(excerpt))")
            } else {
                parts.append("--data-binary @- # streamed body")
            }
        }
        return parts.joined(separator: " ")
    }

    private static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
