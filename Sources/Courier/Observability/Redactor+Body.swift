public import Foundation

extension Redactor {
    /// The first `limit` bytes of `body` as text, with sensitive JSON and form values replaced.
    ///
    /// A JSON body has every value under a sensitive key replaced, at any depth; a form body has its sensitive
    /// pairs replaced; any other body is cut to `limit` bytes and shown as lossy UTF-8.
    public func excerpt(of body: Data, contentType: String?, limit: Int = 1024) -> String {
        let type = contentType?.lowercased() ?? ""
        if type.contains("json") || body.first == UInt8(ascii: "{") || body.first == UInt8(ascii: "[") {
            if let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]),
                let data = try? JSONSerialization.data(
                    withJSONObject: redactJSON(object),
                    options: [.sortedKeys, .fragmentsAllowed]
                )
            {
                return Self.cut(String(decoding: data, as: UTF8.self), to: limit)
            }
        }
        let text = String(decoding: body.prefix(limit), as: UTF8.self)
        if type.contains("x-www-form-urlencoded") || text.contains("=") {
            return Self.cut(redactPairs(text), to: limit)
        }
        return text
    }

    private func redactJSON(_ value: Any) -> Any {
        if let object = value as? [String: Any] {
            var result: [String: Any] = [:]
            for (key, inner) in object {
                result[key] = isSensitive(queryKey: key) ? Self.placeholder : redactJSON(inner)
            }
            return result
        }
        if let array = value as? [Any] {
            return array.map(redactJSON)
        }
        return value
    }

    private static func cut(_ text: String, to limit: Int) -> String {
        text.utf8.count <= limit ? text : String(decoding: text.utf8.prefix(limit), as: UTF8.self) + "…"
    }
}
