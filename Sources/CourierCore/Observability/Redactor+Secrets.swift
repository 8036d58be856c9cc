public import Foundation
public import HTTPTypes

extension Redactor {
    /// The secret values of one call, to scrub out of text Courier did not write itself: an underlying error's
    /// description (a `URLError` names the whole URL, query included), a message a transport built from one, a
    /// response body that echoes the request.
    ///
    /// Collect them from the request as it was sent (before redaction) with ``Redactor/secrets(of:)``, then
    /// scrub with ``Redactor/scrub(_:secrets:)``. Each secret is replaced as written, percent-decoded and
    /// percent-encoded (upper- and lowercase hex), form-encoded and JSON-escaped. A value shorter than
    /// ``minimumLength`` characters is not scrubbed from free text (it would mangle it); it is still redacted
    /// wherever Courier knows its key.
    ///
    /// ```swift
    /// var secrets = client.configuration.redactor.secrets(of: sentRequest)
    /// let safe = client.configuration.redactor.scrub("\(error)", secrets: secrets)
    /// ```
    public struct Secrets: Hashable, Sendable {
        /// Values shorter than this are not scrubbed from free text.
        public static let minimumLength = 4

        /// The secret values as collected (not yet expanded into their encoded forms).
        public private(set) var values: Set<String> = []

        /// No secrets.
        public init() {}

        /// Whether no secret was collected.
        public var isEmpty: Bool { values.isEmpty }

        /// Adds `value` (ignored when shorter than ``minimumLength`` or when it is the placeholder).
        public mutating func insert(_ value: some StringProtocol) {
            let value = String(value)
            guard value.count >= Self.minimumLength, value != Redactor.placeholder else { return }
            values.insert(value)
        }

        /// Adds every secret of `other`.
        public mutating func formUnion(_ other: Secrets) {
            values.formUnion(other.values)
        }

        /// `text` with every form of every secret replaced by ``Redactor/placeholder``.
        public func scrub(_ text: String) -> String {
            guard !values.isEmpty, !text.isEmpty else { return text }
            var text = text
            for form in forms where text.contains(form) {
                text = text.replacingOccurrences(of: form, with: Redactor.placeholder)
            }
            return text
        }

        /// `text`, an excerpt cut short, with a trailing start of a secret (at least ``minimumLength`` characters)
        /// replaced: ``scrub(_:)`` finds whole secrets only, and a token the cut went through kept its first part.
        public func scrubTail(_ text: String) -> String {
            guard !values.isEmpty, !text.isEmpty else { return text }
            var body = Substring(text)
            var ending = ""
            if body.hasSuffix("…") {
                body.removeLast()
                ending = "…"
            }
            while body.hasSuffix("\u{FFFD}") { body.removeLast() }  // a character the cut went through
            for form in forms {
                var count = form.count - 1
                while count >= Self.minimumLength {
                    if body.hasSuffix(form.prefix(count)) {
                        return String(body.dropLast(count)) + Redactor.placeholder + ending
                    }
                    count -= 1
                }
            }
            return text
        }

        /// Every form of every secret, longest first so that a longer form is replaced before a part of it.
        var forms: [String] {
            var forms: Set<String> = []
            for value in values {
                let decoded = value.removingFormEncodingForDisplay
                for plain in [value, decoded] {
                    forms.insert(plain)
                    let strict = Self.percentEncoded(plain)
                    forms.insert(strict)
                    forms.insert(Self.lowercasingHex(strict))
                    if let query = plain.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) {
                        forms.insert(query)
                    }
                    forms.insert(Self.percentEncoded(plain, spaceAsPlus: true))
                    forms.insert(
                        plain.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                            .replacingOccurrences(of: "/", with: "\\/"))
                }
            }
            return forms.filter { $0.count >= Self.minimumLength }.sorted { $0.count > $1.count }
        }

        /// `text` with everything but RFC 3986 unreserved characters percent-encoded, uppercase hex.
        private static func percentEncoded(_ text: String, spaceAsPlus: Bool = false) -> String {
            var result = ""
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                    UInt8(ascii: "~"):
                    result.append(Character(Unicode.Scalar(byte)))
                case UInt8(ascii: " ") where spaceAsPlus:
                    result.append("+")
                default:
                    result += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
                }
            }
            return result
        }

        /// `text` with the hex digits of its percent escapes in lowercase.
        private static func lowercasingHex(_ text: String) -> String {
            guard text.contains("%") else { return text }
            var result = ""
            var remaining = 0
            for character in text {
                if character == "%" {
                    remaining = 2
                    result.append(character)
                } else if remaining > 0 {
                    remaining -= 1
                    result += character.lowercased()
                } else {
                    result.append(character)
                }
            }
            return result
        }
    }

    /// The secret values `request` carries, before redaction: sensitive header values (the credentials part of
    /// `Authorization: Bearer …`, the password of `Basic`, each cookie's value), sensitive query values, and the
    /// userinfo of its authority.
    public func secrets(of request: HTTPRequest) -> Secrets {
        var secrets = Secrets()
        collect(request.headerFields, into: &secrets)
        if let path = request.path { collectQuery(inURL: path, into: &secrets) }
        if let authority = request.authority, let at = authority.lastIndex(of: "@") {
            collectUserinfo(authority[..<at], into: &secrets)
        }
        return secrets
    }

    /// The secret values `response` carries: sensitive header values (`Set-Cookie`) and the query secrets and
    /// userinfo of a `Location` it redirects to.
    public func secrets(ofResponse response: HTTPResponse) -> Secrets {
        var secrets = Secrets()
        collect(response.headerFields, into: &secrets)
        return secrets
    }

    /// The values under sensitive keys in a JSON or form body (at most 64 KiB is looked at).
    public func secrets(inBody body: Data, contentType: String?) -> Secrets {
        var secrets = Secrets()
        guard !body.isEmpty, body.count <= 65_536 else { return secrets }
        let type = contentType?.lowercased() ?? ""
        if type.contains("json") || body.first == UInt8(ascii: "{") || body.first == UInt8(ascii: "["),
            let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])
        {
            collectJSON(object, sensitive: false, into: &secrets)
        } else if type.contains("x-www-form-urlencoded") {
            collectPairs(String(decoding: body, as: UTF8.self), into: &secrets)
        }
        return secrets
    }

    /// `text` with every secret in `secrets` replaced, and every `key=value` under a sensitive key redacted
    /// (see ``redactInlinePairs(_:)``).
    ///
    /// - Parameters:
    ///   - text: Text Courier did not write, such as the description of a transport's error.
    ///   - secrets: The call's secret values, collected before redaction.
    /// - Returns: The text, safe to log.
    public func scrub(_ text: String, secrets: Secrets) -> String {
        redactInlinePairs(secrets.scrub(text))
    }

    private func collect(_ fields: HTTPFields, into secrets: inout Secrets) {
        for field in fields {
            if isSensitive(field.name) {
                collectHeaderValue(field.value, name: field.name, into: &secrets)
            } else if Self.urlValuedNames.contains(field.name) {
                collectQuery(inURL: field.value, into: &secrets)
                if let range = Self.userinfoRange(in: field.value) {
                    collectUserinfo(field.value[range].dropLast(), into: &secrets)
                }
            }
        }
    }

    private func collectHeaderValue(_ value: String, name: HTTPField.Name, into secrets: inout Secrets) {
        secrets.insert(value)
        if name == .cookie || name == .setCookie {
            let cookies = value.split(separator: ";").prefix(name == .setCookie ? 1 : .max)
            for cookie in cookies {
                let trimmed = cookie.trimmingCharacters(in: .whitespaces)
                secrets.insert(trimmed)
                if let equals = trimmed.firstIndex(of: "=") {
                    secrets.insert(trimmed[trimmed.index(after: equals)...])
                }
            }
            return
        }
        // `<scheme> <credentials>`, as in `Authorization: Bearer <token>`.
        guard let space = value.firstIndex(of: " "), value[..<space].allSatisfy({ $0.isLetter || $0 == "-" }) else {
            return
        }
        let credentials = value[space...].trimmingCharacters(in: .whitespaces)
        secrets.insert(credentials)
        if value[..<space].lowercased() == "basic", let data = Data(base64Encoded: credentials) {
            let userPassword = String(decoding: data, as: UTF8.self)
            secrets.insert(userPassword)
            if let colon = userPassword.firstIndex(of: ":") {
                secrets.insert(userPassword[userPassword.index(after: colon)...])
            }
        }
    }

    private func collectQuery(inURL text: String, into secrets: inout Secrets) {
        var main = Substring(text)
        if let hash = text.firstIndex(of: "#") {
            main = text[..<hash]
            // An OAuth implicit or fragment-mode answer (`#access_token=…&state=…`) is form-encoded too.
            collectPairs(text[text.index(after: hash)...], into: &secrets)
        }
        let mark = main.firstIndex(of: "?")
        let path = main[..<(mark ?? main.endIndex)]
        for value in sensitivePathParameterValues(in: path) { secrets.insert(path[value]) }
        guard let mark else { return }
        collectPairs(main[main.index(after: mark)...], into: &secrets)
    }

    private func collectPairs(_ encoded: some StringProtocol, into secrets: inout Secrets) {
        let pairs = Self.pairs(encoded)
        let keys = pairs.map(\.key)
        for pair in pairs {
            guard let value = pair.value, isSensitive(key: pair.key, siblings: keys) else { continue }
            secrets.insert(value)
        }
    }

    private func collectUserinfo(_ userinfo: some StringProtocol, into secrets: inout Secrets) {
        secrets.insert(userinfo)
        if let colon = userinfo.firstIndex(of: ":") {
            secrets.insert(userinfo[userinfo.index(after: colon)...])
        }
    }

    private func collectJSON(_ value: Any, sensitive: Bool, into secrets: inout Secrets) {
        if let object = value as? [String: Any] {
            for (key, inner) in object {
                collectJSON(inner, sensitive: sensitive || isSensitive(key: key, siblings: object.keys), into: &secrets)
            }
        } else if let array = value as? [Any] {
            for inner in array { collectJSON(inner, sensitive: sensitive, into: &secrets) }
        } else if let text = value as? String {
            if sensitive {
                secrets.insert(text)
            } else if let embedded = Self.embeddedJSON(in: text) {
                collectJSON(embedded, sensitive: false, into: &secrets)
            } else if text.contains("=") {
                let characters = Array(text)
                for range in sensitiveInlineValues(in: characters) { secrets.insert(String(characters[range])) }
            }
        } else if sensitive, let number = value as? NSNumber {
            secrets.insert(number.stringValue)
        }
    }
}
