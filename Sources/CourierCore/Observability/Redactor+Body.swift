public import Foundation

extension Redactor {
    /// The first `limit` bytes of `body` as text, with sensitive JSON and form values replaced.
    ///
    /// A JSON body has every value under a sensitive key replaced, at any depth; a form body has its sensitive
    /// pairs replaced; any other body is cut to `limit` bytes, shown as lossy UTF-8, and has every `key=value`
    /// under a sensitive key replaced wherever it appears (a server echoing the request's URL, say).
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
        if type.contains("x-www-form-urlencoded") {
            return Self.cut(redactPairs(text), to: limit)
        }
        return Self.cut(redactInlinePairs(text), to: limit)
    }

    /// `text` with the value of every `key=value` whose key is sensitive replaced, wherever it appears: in a URL
    /// inside an error message, in a form body, in a plain-text body that echoes a query.
    ///
    /// ```swift
    /// Redactor.default.redactInlinePairs("no route for /v1/files?api-key=abc&page=2")
    /// // "no route for /v1/files?api-key=<redacted>&page=2"
    /// ```
    public func redactInlinePairs(_ text: String) -> String {
        guard text.contains("=") else { return text }
        let characters = Array(text)
        var found: [(key: String, value: Range<Int>)] = []
        for index in characters.indices where characters[index] == "=" {
            var keyStart = index
            while keyStart > 0, Self.isKeyCharacter(characters[keyStart - 1]) { keyStart -= 1 }
            var valueEnd = index + 1
            while valueEnd < characters.count, !Self.endsValue(characters[valueEnd]) { valueEnd += 1 }
            guard keyStart < index, valueEnd > index + 1 else { continue }
            let key = String(characters[keyStart..<index]).removingFormEncodingForDisplay
            found.append((key, (index + 1)..<valueEnd))
        }
        let keys = found.map(\.key)
        var result = ""
        var position = 0
        for pair in found where isSensitive(key: pair.key, siblings: keys) && pair.value.lowerBound >= position {
            result += String(characters[position..<pair.value.lowerBound]) + Self.placeholder
            position = pair.value.upperBound
        }
        return position == 0 ? text : result + String(characters[position...])
    }

    /// Whether `character` can be part of a key in `key=value` found in running text.
    static func isKeyCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "_-.[]%".contains(character))
    }

    /// Whether `character` ends a value in `key=value` found in running text.
    static func endsValue(_ character: Character) -> Bool {
        character.isWhitespace || "&\"'<>#;,(){}".contains(character)
    }

    private func redactJSON(_ value: Any) -> Any {
        if let object = value as? [String: Any] {
            var result: [String: Any] = [:]
            for (key, inner) in object {
                result[key] = isSensitive(key: key, siblings: object.keys) ? Self.placeholder : redactJSON(inner)
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
