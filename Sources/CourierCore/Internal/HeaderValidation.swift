import HTTPTypes

/// Checks header names and values before they enter an `HTTPFields` (which would silently rewrite them).
enum HeaderValidation {
    /// Returns `value` when it holds no control characters (HTAB allowed), else throws `invalidHeader`.
    static func validatedValue(_ value: String, for name: String, redacted: @autoclosure () -> Bool = false) throws
        -> String
    {
        // The search is a plain byte scan; the offset is counted only for a bad value (`enumerated()` over the UTF-8
        // view cost 1.4 % of a call, issue #17).
        if let index = value.utf8.firstIndex(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) {
            let byte = value.utf8[index]
            let offset = value.utf8.distance(from: value.utf8.startIndex, to: index)
            throw CourierError(
                code: .invalidHeader,
                stage: .adapt,
                message: "the value of header '\(name)' contains \(describe(byte)) at byte \(offset)"
                    + (redacted() ? "" : "; nothing was sent")
            )
        }
        return value
    }

    /// Returns the field name for `name` when it is an RFC 9110 token, else throws `invalidHeader`.
    static func validatedName(_ name: String) throws -> HTTPField.Name {
        guard let fieldName = HTTPField.Name(name), !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else {
            let shown = name.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 ? String($0) : "?" }.joined()
            throw CourierError(
                code: .invalidHeader,
                stage: .adapt,
                message: "'\(shown)' is not a valid header name (RFC 9110 token characters only)"
            )
        }
        return fieldName
    }

    /// Validates `headers` and sets them on `fields`, replacing earlier fields with the same names.
    static func apply(_ headers: RequestHeaders, to fields: inout HTTPFields) throws {
        var validated: [HTTPField] = []
        validated.reserveCapacity(headers.fields.count)
        for field in headers {
            let name = try validatedName(field.name)
            let value = try validatedValue(field.value, for: field.name, redacted: Redactor.default.isSensitive(name))
            validated.append(HTTPField(name: name, value: value))
        }
        for name in Set(validated.map(\.name)) {
            fields[name] = nil
        }
        fields.append(contentsOf: validated)
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    private static func describe(_ byte: UInt8) -> String {
        let name: String
        switch byte {
        case 0x00: name = "a NUL"
        case 0x0A: name = "a line feed"
        case 0x0D: name = "a carriage return"
        case 0x7F: name = "a DEL"
        default: name = "a control character"
        }
        return name + " (0x" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2) + ")"
    }
}

extension String {
    func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
