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
