#if TestServer
    import Foundation

    /// A JSON document, built by routes and serialised with sorted keys like httpbin's `jsonify`.
    enum JSONValue: Sendable, Equatable {
        case null
        case bool(Bool)
        case int(Int64)
        case double(Double)
        case string(String)
        case array([JSONValue])
        case object([String: JSONValue])

        /// Parses `bytes` as JSON, or returns `nil` when they are not valid JSON.
        static func parse(_ bytes: [UInt8]) -> JSONValue? {
            guard !bytes.isEmpty else { return nil }
            return try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        }

        /// The compact serialisation, keys sorted.
        var serialized: String {
            var output = ""
            write(to: &output)
            return output
        }

        /// The serialisation as bytes, with a trailing newline as httpbin sends.
        var bytes: [UInt8] {
            Array((serialized + "\n").utf8)
        }

        private func write(to output: inout String) {
            switch self {
            case .null: output += "null"
            case .bool(let value): output += value ? "true" : "false"
            case .int(let value): output += String(value)
            case .double(let value): output += value.isFinite ? "\(value)" : "null"
            case .string(let value): Self.writeString(value, to: &output)
            case .array(let values):
                output += "["
                for (index, value) in values.enumerated() {
                    if index > 0 { output += ", " }
                    value.write(to: &output)
                }
                output += "]"
            case .object(let members):
                output += "{"
                for (index, key) in members.keys.sorted().enumerated() {
                    if index > 0 { output += ", " }
                    Self.writeString(key, to: &output)
                    output += ": "
                    members[key, default: .null].write(to: &output)
                }
                output += "}"
            }
        }

        private static func writeString(_ value: String, to output: inout String) {
            output += "\""
            for scalar in value.unicodeScalars {
                switch scalar {
                case "\"": output += "\\\""
                case "\\": output += "\\\\"
                case "\n": output += "\\n"
                case "\r": output += "\\r"
                case "\t": output += "\\t"
                default:
                    if scalar.value < 0x20 {
                        let hex = String(scalar.value, radix: 16)
                        output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                    } else {
                        output.unicodeScalars.append(scalar)
                    }
                }
            }
            output += "\""
        }
    }

    extension JSONValue: Decodable {
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Int64.self) {
                self = .int(value)
            } else if let value = try? container.decode(Double.self) {
                self = .double(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else if let value = try? container.decode([JSONValue].self) {
                self = .array(value)
            } else {
                self = .object(try container.decode([String: JSONValue].self))
            }
        }
    }

    extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral {
        init(stringLiteral value: String) {
            self = .string(value)
        }

        init(booleanLiteral value: Bool) {
            self = .bool(value)
        }

        init(integerLiteral value: Int64) {
            self = .int(value)
        }
    }

    extension JSONValue: ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral {
        init(dictionaryLiteral elements: (String, JSONValue)...) {
            self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
        }

        init(arrayLiteral elements: JSONValue...) {
            self = .array(elements)
        }
    }
#endif
