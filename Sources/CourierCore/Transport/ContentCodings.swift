package import HTTPTypes

/// The content codings of a response, and the rule every Courier transport applies to them.
///
/// A transport decodes at most **one** coding, `gzip` or `deflate` (and those its platform decodes by itself,
/// such as `br` on Apple's URLSession and `x-gzip` on URLSession), within its decompression limit. A response that stacks several codings
/// (`Content-Encoding: gzip, gzip`, or one per header line) or uses one the transport cannot decode fails with
/// ``CourierError/Code/unsupported`` on every transport, rather than be decoded by one layer on one transport,
/// every layer on another, and handed over still compressed on a third (curl caps stacked codings at 5 for the
/// same reason, CVE-2022-32206).
package enum ContentCodings {
    /// The codings every transport decodes. Not `x-gzip`, which NIO's decompressor (AsyncHTTPClient's) passes on
    /// undecoded.
    package static let decodable: Set<String> = ["gzip", "deflate"]

    /// The response's codings in order, lowercased, `identity` left out.
    package static func codings(of head: HTTPResponse) -> [Substring] {
        listed(in: head).filter { $0 != "identity" }
    }

    /// The response's codings in order, lowercased, `identity` included (NIO's decompressor looks at the first).
    package static func listed(in head: HTTPResponse) -> [Substring] {
        var listed: [Substring] = []
        for value in head.headerFields[values: .contentEncoding] {
            for coding in value.split(separator: ",") {
                let trimmed = coding.trimmingASCIISpaces()
                if !trimmed.isEmpty { listed.append(Substring(trimmed.lowercased())) }
            }
        }
        return listed
    }

    /// Throws ``CourierError/Code/unsupported`` unless the response has at most one coding, from `decodable`.
    package static func check(_ head: HTTPResponse, decodable: Set<String> = ContentCodings.decodable) throws {
        let codings = codings(of: head)
        guard !codings.isEmpty else { return }
        if codings.count > 1 {
            throw CourierError(
                code: .unsupported,
                stage: .transport,
                message: "unsupported: the response stacks \(codings.count) content codings "
                    + "(\(codings.prefix(8).joined(separator: ", "))); at most one is decoded",
                response: head
            )
        }
        if let coding = codings.first, !decodable.contains(String(coding)) {
            throw CourierError(
                code: .unsupported,
                stage: .transport,
                message: "unsupported: the response's content coding \"\(coding.prefix(32))\" cannot be decoded",
                response: head
            )
        }
    }
}

extension Substring {
    fileprivate func trimmingASCIISpaces() -> Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
