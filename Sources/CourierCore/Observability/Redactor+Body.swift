public import Foundation

extension Redactor {
    /// The first `limit` bytes of `body` as text, with sensitive JSON and form values replaced.
    ///
    /// A JSON body has every value under a sensitive key replaced, at any depth, and in its strings every
    /// `key=value` under a sensitive key (a callback URL's `?token=…`) and the JSON a string holds; a form body has its sensitive
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
        var result = ""
        var position = 0
        for value in sensitiveInlineValues(in: characters) where value.lowerBound >= position {
            result += String(characters[position..<value.lowerBound]) + Self.placeholder
            position = value.upperBound
        }
        return position == 0 ? text : result + String(characters[position...])
    }

    /// The ranges, in `characters`, of the values of the `key=value` pairs under a sensitive key in running text.
    func sensitiveInlineValues(in characters: [Character]) -> [Range<Int>] {
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
        return found.filter { isSensitive(key: $0.key, siblings: keys) }.map(\.value)
    }

    /// The JSON a string value holds itself (`{"payload":"{\"password\":\"x\"}"}`, a webhook's body as a string),
    /// or `nil`.
    static func embeddedJSON(in text: String) -> Any? {
        guard let first = text.utf8.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }),
            first == UInt8(ascii: "{") || first == UInt8(ascii: "["), text.utf8.count <= 65_536
        else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(text.utf8))
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
        if let text = value as? String {
            // A secret inside a string: a URL's `?token=…`, or JSON held as a string.
            if let embedded = Self.embeddedJSON(in: text),
                let data = try? JSONSerialization.data(withJSONObject: redactJSON(embedded), options: [.sortedKeys])
            {
                return String(decoding: data, as: UTF8.self)
            }
            return redactInlinePairs(text)
        }
        return value
    }

    private static func cut(_ text: String, to limit: Int) -> String {
        text.utf8.count <= limit ? text : String(decoding: text.utf8.prefix(limit), as: UTF8.self) + "…"
    }
}
