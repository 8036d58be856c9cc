/// A set of named values for a query string or a form body, written as a dictionary literal of mixed types or
/// wrapping any `Encodable` value.
///
/// The values are encoded by the client's ``URLEncodedFormEncoder`` (keys sorted by default, nested values as
/// `a[b]=c`, arrays as `a[]=1&a[]=2`), so the same parameters give the same bytes on every platform.
///
/// ```swift
/// var query: Parameters? { ["q": term, "page": page, "tags": ["a", "b"]] }
/// var query: Parameters? { Parameters(filter) }     // filter: some Encodable & Sendable
/// ```
public struct Parameters: Encodable, Sendable, ExpressibleByDictionaryLiteral {
    private enum Storage: Sendable {
        case pairs([(String, any Encodable & Sendable)])
        case value(any Encodable & Sendable)
    }

    private let storage: Storage

    /// Creates parameters from a dictionary literal whose values may have different types.
    public init(dictionaryLiteral elements: (String, any Encodable & Sendable)...) {
        self.storage = .pairs(elements)
    }

    /// Creates parameters from any encodable value whose top level is keyed (a struct or a dictionary).
    public init(_ value: some Encodable & Sendable) {
        self.storage = .value(value)
    }

    /// Encodes the parameters as a keyed container.
    public func encode(to encoder: any Encoder) throws {
        switch storage {
        case .value(let value):
            try value.encode(to: encoder)
        case .pairs(let pairs):
            var container = encoder.container(keyedBy: ParameterKey.self)
            for (name, value) in pairs {
                try container.encode(value, forKey: ParameterKey(stringValue: name))
            }
        }
    }
}

struct ParameterKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }

    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension Parameters {
    /// The form pairs of a dictionary literal whose values are all strings, `Int`s, `Bool`s, finite `Double`s, or
    /// arrays of those, built directly; `nil` for anything else, which ``URLEncodedFormEncoder`` then encodes
    /// through its `Encoder`, with the same result.
    ///
    /// Most queries are such literals, and the `Encoder` builds a tree of nodes for them: a call with a 5-item query
    /// made 70 allocations that way, and makes 22 this way (issue #17, `courier-allocations`). Anything this path does not handle exactly
    /// as the `Encoder` would (a repeated name, a `nil`, another type, more than 32 names) takes the `Encoder`.
    func flatPairs(using options: URLEncodedFormEncoder) -> [(name: String, value: String)]? {
        guard case .pairs(let pairs) = storage, pairs.count <= 32 else { return nil }
        // A repeated name keeps its first place with its last value in the `Encoder`: left to it.
        for first in pairs.indices {
            for second in (first + 1)..<pairs.count where pairs[first].0 == pairs[second].0 {
                return nil
            }
        }
        var result: [(name: String, value: String)] = []
        result.reserveCapacity(pairs.count)
        switch options.keyOrdering {
        case .encodingOrder:
            for (name, value) in pairs {
                guard Self.append(value, named: name, to: &result, options: options) else { return nil }
            }
        case .sorted:
            // Selection by UTF-8 order, as the `Encoder`'s flattening sorts: no index array to allocate.
            var taken: UInt64 = 0
            for _ in pairs.indices {
                var next = -1
                for candidate in pairs.indices where taken & (1 << UInt64(candidate)) == 0 {
                    if next < 0 || URLEncodedFormEncoder.sortsBefore(pairs[candidate].0, pairs[next].0) {
                        next = candidate
                    }
                }
                taken |= 1 << UInt64(next)
                guard Self.append(pairs[next].1, named: pairs[next].0, to: &result, options: options) else {
                    return nil
                }
            }
        }
        return result
    }

    /// Appends the pairs of one value, or returns `false` when it is not one this path handles.
    private static func append(
        _ value: any Encodable & Sendable,
        named name: String,
        to result: inout [(name: String, value: String)],
        options: URLEncodedFormEncoder
    ) -> Bool {
        if let text = scalarText(value, options: options) {
            result.append((name: name, value: text))
            return true
        }
        let elements: [String]
        switch value {
        case let strings as [String]:
            elements = strings
        case let integers as [Int]:
            elements = integers.map { String($0) }
        case let booleans as [Bool]:
            elements = booleans.map { options.text(for: $0) }
        case let numbers as [Double]:
            guard numbers.allSatisfy(\.isFinite) else { return false }
            elements = numbers.map(\.description)
        default:
            return false
        }
        for (index, element) in elements.enumerated() {
            result.append((name: options.elementName(name, index: index), value: element))
        }
        return true
    }

    /// The text of a string, `Int`, `Bool` or finite `Double`, as the `Encoder` writes it; `nil` for anything else.
    private static func scalarText(_ value: any Encodable & Sendable, options: URLEncodedFormEncoder) -> String? {
        switch value {
        case let string as String: string
        case let integer as Int: String(integer)
        case let boolean as Bool: options.text(for: boolean)
        case let number as Double: number.isFinite ? number.description : nil
        default: nil
        }
    }
}
