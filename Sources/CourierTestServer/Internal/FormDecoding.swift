#if TestServer
    /// Splitting request targets and decoding `application/x-www-form-urlencoded` text.
    enum URIParts {
        /// Splits a request target into its path and its query (without `?`; empty when absent).
        static func split(_ uri: String) -> (path: String, query: Substring) {
            guard let mark = uri.firstIndex(of: "?") else { return (uri, "") }
            return (String(uri[..<mark]), uri[uri.index(after: mark)...])
        }
    }

    /// Decoding of query strings and urlencoded form bodies.
    enum FormDecoding {
        /// Decodes `a=1&b=x+y&c` into ordered name/value pairs (`+` is a space, `%XX` escapes decoded).
        static func decodeQuery(_ query: Substring) -> [(name: String, value: String)] {
            guard !query.isEmpty else { return [] }
            var items: [(name: String, value: String)] = []
            for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
                if let equals = pair.firstIndex(of: "=") {
                    let name = percentDecode(pair[..<equals])
                    let value = percentDecode(pair[pair.index(after: equals)...])
                    items.append((name, value))
                } else {
                    items.append((percentDecode(pair), ""))
                }
            }
            return items
        }

        /// Decodes `%XX` escapes and `+` as a space; invalid escapes are kept verbatim, invalid UTF-8 is repaired.
        static func percentDecode(_ text: Substring, plusIsSpace: Bool = true) -> String {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(text.utf8.count)
            var iterator = Array(text.utf8)[...]
            while let byte = iterator.popFirst() {
                if byte == UInt8(ascii: "+"), plusIsSpace {
                    bytes.append(UInt8(ascii: " "))
                } else if byte == UInt8(ascii: "%"), iterator.count >= 2,
                    let high = hexValue(iterator[iterator.startIndex]),
                    let low = hexValue(iterator[iterator.startIndex + 1])
                {
                    bytes.append(high << 4 | low)
                    iterator = iterator.dropFirst(2)
                } else {
                    bytes.append(byte)
                }
            }
            return String(decoding: bytes, as: UTF8.self)
        }

        /// Groups pairs the way httpbin's `semiflatten` does: one value stays a string, repeats become an array.
        static func semiflatten(_ items: [(name: String, value: String)]) -> JSONValue {
            var grouped: [String: [String]] = [:]
            for item in items {
                grouped[item.name, default: []].append(item.value)
            }
            return .object(
                grouped.mapValues { values in
                    values.count == 1 ? .string(values[0]) : .array(values.map { .string($0) })
                }
            )
        }

        private static func hexValue(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
    }

    extension String {
        /// ASCII case-insensitive comparison, enough for header names.
        func caseInsensitiveEquals(_ other: String) -> Bool {
            utf8.count == other.utf8.count && lowercased() == other.lowercased()
        }

        /// The header name title-cased as httpbin (werkzeug) shows it: `x-custom-header` → `X-Custom-Header`.
        var titleCasedHeaderName: String {
            split(separator: "-", omittingEmptySubsequences: false)
                .map { $0.prefix(1).uppercased() + $0.dropFirst().lowercased() }
                .joined(separator: "-")
        }
    }
#endif
