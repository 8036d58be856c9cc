/// Byte-level RFC 3986 percent encoding for URL components and form bodies.
///
/// Encoding works directly on UTF-8 bytes: bytes in the allowed set are copied through, every other byte
/// becomes a `%XX` triplet with uppercase hexadecimal digits. The input is encoded exactly once — existing
/// `%` signs are never interpreted, so `%2F` becomes `%252F`.
package enum PercentEncoding {
    /// A set of ASCII bytes that may appear literally (unencoded) in an encoded component.
    ///
    /// Only printable ASCII can be allowed. `%`, space, control characters (CR, LF, NUL, …) and every
    /// non-ASCII byte are always encoded, whatever the set was built from.
    package struct AllowedCharacters: Sendable, Hashable {
        /// Bit `n` set means byte `n` (0..<64) is allowed.
        private let low: UInt64
        /// Bit `n` set means byte `64 + n` (64..<128) is allowed.
        private let high: UInt64

        /// Creates a set from the ASCII characters in `characters`, ignoring any that must always be encoded.
        package init(_ characters: String) {
            var low: UInt64 = 0
            var high: UInt64 = 0
            for byte in characters.utf8 where byte > ASCII.space && byte < ASCII.delete && byte != ASCII.percent {
                if byte < 64 {
                    low |= 1 << UInt64(byte)
                } else {
                    high |= 1 << UInt64(byte - 64)
                }
            }
            self.low = low
            self.high = high
        }

        private init(low: UInt64, high: UInt64) {
            self.low = low
            self.high = high
        }

        /// RFC 3986 unreserved characters: `A-Z a-z 0-9 - . _ ~`. Use for query and form names and values.
        package static let unreserved = AllowedCharacters(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
        )

        /// RFC 3986 `pchar`: unreserved, sub-delims `!$&'()*+,;=`, `:` and `@`. Use for one path segment.
        ///
        /// `/`, `?`, `#` and `%` are not in the set, so a segment can never escape its position in a path.
        package static let pathSegment = unreserved.union(AllowedCharacters("!$&'()*+,;=:@"))

        /// ``pathSegment`` without `;`: for a value put into a path (`\(pathSegment:)`). Java servlet containers
        /// (Tomcat, Jetty) cut a segment at `;` before resolving dot segments, so a literal `..;` would reach the
        /// parent path and `bob;x=1` would arrive as `bob`.
        package static let pathSegmentValue = unreserved.union(AllowedCharacters("!$&'()*+,=:@"))

        /// Returns a set allowing every byte allowed by either `self` or `other`.
        package func union(_ other: AllowedCharacters) -> AllowedCharacters {
            AllowedCharacters(low: low | other.low, high: high | other.high)
        }

        /// Returns whether `byte` may appear literally.
        @inline(__always)
        package func contains(_ byte: UInt8) -> Bool {
            if byte < 64 {
                return low & (1 << UInt64(byte)) != 0
            }
            if byte < 128 {
                return high & (1 << UInt64(byte - 64)) != 0
            }
            return false
        }
    }

    /// Percent-encodes `string` so that only bytes in `set` stay literal.
    ///
    /// Every other byte of the UTF-8 representation becomes `%XX` with uppercase hex digits. When
    /// `spaceAsPlus` is `true` (form bodies only), a space becomes `+` and a literal `+` is always encoded
    /// as `%2B`, even if `set` allows it, so the output stays unambiguous.
    ///
    /// - Parameters:
    ///   - string: The text to encode; it is encoded exactly once and never decoded first.
    ///   - set: The bytes that may appear unencoded.
    ///   - spaceAsPlus: Whether to write a space as `+` instead of `%20`.
    /// - Returns: The encoded text.
    package static func encode(
        _ string: some StringProtocol,
        allowing set: AllowedCharacters,
        spaceAsPlus: Bool = false
    ) -> String {
        let utf8 = string.utf8
        var length = 0
        var changed = false
        for byte in utf8 {
            switch classify(byte, set: set, spaceAsPlus: spaceAsPlus) {
            case .literal:
                length += 1
            case .plus:
                length += 1
                changed = true
            case .escaped:
                length += 3
                changed = true
            }
        }
        guard changed else {
            return String(string)
        }
        return String(unsafeUninitializedCapacity: length) { buffer in
            var index = 0
            for byte in utf8 {
                index = write(byte, set: set, spaceAsPlus: spaceAsPlus, into: buffer, at: index)
            }
            return index
        }
    }

    /// Appends the percent-encoded UTF-8 bytes of `string` to `output`, with the same rules as
    /// ``encode(_:allowing:spaceAsPlus:)``.
    package static func append(
        _ string: some StringProtocol,
        allowing set: AllowedCharacters,
        spaceAsPlus: Bool = false,
        to output: inout [UInt8]
    ) {
        for byte in string.utf8 {
            switch classify(byte, set: set, spaceAsPlus: spaceAsPlus) {
            case .literal:
                output.append(byte)
            case .plus:
                output.append(ASCII.plus)
            case .escaped:
                output.append(ASCII.percent)
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            }
        }
    }

    /// Returns whether `string` is already a valid encoding for `set`.
    ///
    /// That is the case when every byte is either in `set` or part of a well-formed `%XX` triplet (hex
    /// digits of either case). Use it to accept a component the caller already percent-encoded.
    ///
    /// - Parameters:
    ///   - string: The text to check.
    ///   - set: The bytes that may appear unencoded.
    /// - Returns: `true` if `string` can be used as-is; `false` for raw disallowed bytes or a malformed
    ///   escape such as `%2` or `%zz`.
    package static func isValidPercentEncoded(_ string: some StringProtocol, allowing set: AllowedCharacters) -> Bool {
        var iterator = string.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == ASCII.percent {
                guard let high = iterator.next(), isHexDigit(high),
                    let low = iterator.next(), isHexDigit(low)
                else {
                    return false
                }
            } else if !set.contains(byte) {
                return false
            }
        }
        return true
    }

    /// Percent-encodes a whole path, keeping its `/` separators.
    ///
    /// Well-formed `%XX` triplets are kept as written (the caller, or a `\(pathSegment:)` interpolation, already
    /// encoded them); every other byte outside ``AllowedCharacters/pathSegment`` and `/` is encoded once, a `%` that
    /// starts no triplet included. So `/a%20b/c d` becomes `/a%20b/c%20d`, `/100%/x` becomes `/100%25/x`, and
    /// `/Q1%20report final.pdf` becomes `/Q1%20report%20final.pdf` (not `Q1%2520…`). Empty and dot segments are
    /// kept as they are.
    ///
    /// - Parameter path: The path, with or without a leading `/`.
    /// - Returns: A path containing only `pchar` bytes, `/` and well-formed `%XX` triplets.
    package static func encodePath(_ path: some StringProtocol) -> String {
        if isValidPercentEncoded(path, allowing: pathWithSlashes) {
            return String(path)
        }
        let bytes = Array(path.utf8)
        return String(unsafeUninitializedCapacity: bytes.count * 3) { buffer in
            var index = 0
            var written = 0
            while index < bytes.count {
                if bytes[index] == ASCII.percent, index + 2 < bytes.count, isHexDigit(bytes[index + 1]),
                    isHexDigit(bytes[index + 2])
                {
                    for offset in 0..<3 { buffer[written + offset] = bytes[index + offset] }
                    written += 3
                    index += 3
                } else {
                    written = write(bytes[index], set: pathWithSlashes, spaceAsPlus: false, into: buffer, at: written)
                    index += 1
                }
            }
            return written
        }
    }

    // MARK: - Internals

    private enum Output {
        case literal
        case plus
        case escaped
    }

    private enum ASCII {
        static let space: UInt8 = 0x20
        static let percent: UInt8 = 0x25
        static let plus: UInt8 = 0x2B
        static let delete: UInt8 = 0x7F
    }

    private static let pathWithSlashes = AllowedCharacters.pathSegment.union(AllowedCharacters("/"))

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    @inline(__always)
    private static func classify(_ byte: UInt8, set: AllowedCharacters, spaceAsPlus: Bool) -> Output {
        if spaceAsPlus {
            if byte == ASCII.space {
                return .plus
            }
            if byte == ASCII.plus {
                return .escaped
            }
        }
        return set.contains(byte) ? .literal : .escaped
    }

    @inline(__always)
    private static func write(
        _ byte: UInt8,
        set: AllowedCharacters,
        spaceAsPlus: Bool,
        into buffer: UnsafeMutableBufferPointer<UInt8>,
        at index: Int
    ) -> Int {
        switch classify(byte, set: set, spaceAsPlus: spaceAsPlus) {
        case .literal:
            buffer[index] = byte
            return index + 1
        case .plus:
            buffer[index] = ASCII.plus
            return index + 1
        case .escaped:
            buffer[index] = ASCII.percent
            buffer[index + 1] = hexDigits[Int(byte >> 4)]
            buffer[index + 2] = hexDigits[Int(byte & 0x0F)]
            return index + 3
        }
    }

    @inline(__always)
    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "F"),
            UInt8(ascii: "a")...UInt8(ascii: "f"):
            return true
        default:
            return false
        }
    }
}
