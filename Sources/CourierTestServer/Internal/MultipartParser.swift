#if TestServer
    import Foundation

    /// Parses `multipart/form-data` bodies into httpbin's `form` and `files`.
    ///
    /// A part with a `filename` goes to `files` (its content as text when it is UTF-8, else a base64 `data:` URL, as
    /// httpbin's `json_safe` does); any other part goes to `form`.
    struct MultipartParser {
        /// One part of the body.
        struct Part {
            var name: String
            var filename: String?
            var contentType: String?
            var body: [UInt8]
        }

        /// The `boundary` parameter of a `multipart/form-data` content type, or `nil` for any other type.
        static func boundary(fromContentType contentType: String) -> String? {
            let parameters = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = parameters.first, first.lowercased() == "multipart/form-data" else { return nil }
            for parameter in parameters.dropFirst() where parameter.lowercased().hasPrefix("boundary=") {
                let value = parameter.dropFirst("boundary=".count)
                return value.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
            return nil
        }

        /// Splits `body` into parts; malformed trailing data is ignored.
        static func parse(_ body: [UInt8], boundary: String) -> [Part] {
            let delimiter = Array("--\(boundary)".utf8)
            let separator = Array("\r\n\r\n".utf8)
            var parts: [Part] = []
            guard var cursor = body.firstRange(of: delimiter)?.upperBound else { return [] }
            while cursor < body.count {
                // After a delimiter: "--" ends the body, otherwise CRLF then the part headers.
                if body[cursor...].starts(with: Array("--".utf8)) { break }
                guard let headerEnd = body[cursor...].firstRange(of: separator) else { break }
                let headerText = String(decoding: body[cursor..<headerEnd.lowerBound], as: UTF8.self)
                let contentStart = headerEnd.upperBound
                guard let next = body[contentStart...].firstRange(of: Array("\r\n".utf8) + delimiter) else { break }
                if var part = parseHeaders(headerText) {
                    part.body = Array(body[contentStart..<next.lowerBound])
                    parts.append(part)
                }
                cursor = next.upperBound
            }
            return parts
        }

        /// httpbin's `json_safe`: UTF-8 text as is, anything else as a base64 `data:` URL.
        static func jsonSafe(_ bytes: [UInt8], contentType: String? = nil) -> String {
            // Not `String(validating:as:)`, which needs macOS 15 and iOS 18: a repaired string has other bytes.
            let text = String(decoding: bytes, as: UTF8.self)
            if text.utf8.elementsEqual(bytes) {
                return text
            }
            let type = contentType ?? "application/octet-stream"
            return "data:\(type);base64,\(Data(bytes).base64EncodedString())"
        }

        private static func parseHeaders(_ text: String) -> Part? {
            var part = Part(name: "", filename: nil, contentType: nil, body: [])
            var sawName = false
            for line in text.split(whereSeparator: \.isNewline) {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let name = line[..<colon].trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                if name == "content-type" {
                    part.contentType = value
                } else if name == "content-disposition" {
                    for parameter in value.split(separator: ";").dropFirst() {
                        let pair = parameter.split(separator: "=", maxSplits: 1).map {
                            $0.trimmingCharacters(in: .whitespaces)
                        }
                        guard pair.count == 2 else { continue }
                        let unquoted = pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                        switch pair[0].lowercased() {
                        case "name":
                            part.name = unquoted
                            sawName = true
                        case "filename": part.filename = unquoted
                        default: break
                        }
                    }
                }
            }
            return sawName ? part : nil
        }
    }
#endif
