import Foundation

/// The `Encoder` behind ``URLEncodedFormEncoder``: records an encoded value as a tree of ``Node``s, turning
/// every scalar into its final (not yet percent-encoded) text on the way.
struct FormEncodingEncoder: Encoder {
    /// The node this encoder writes into.
    let node: Node
    let codingPath: [any CodingKey]
    let options: URLEncodedFormEncoder
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.makeKeyed()
        return KeyedEncodingContainer(KeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.makeUnkeyed()
        return UnkeyedContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(encoder: self)
    }

    /// Returns an encoder for `node` at `codingPath`, sharing this encoder's options.
    func encoder(for node: Node, at codingPath: [any CodingKey]) -> FormEncodingEncoder {
        FormEncodingEncoder(node: node, codingPath: codingPath, options: options)
    }

    /// Encodes `value` into `node`, applying the strategies for `Date`, `Data`, `URL` and `Decimal`.
    func encodeValue<T: Encodable>(_ value: T, into node: Node, codingPath: [any CodingKey]) throws {
        switch value {
        case let date as Date:
            try node.setScalar(options.text(for: date, at: codingPath))
        case let data as Data:
            try node.setScalar(options.text(for: data, at: codingPath))
        case let url as URL:
            node.setScalar(url.absoluteString)
        case let decimal as Decimal:
            guard !decimal.isNaN else {
                throw EncodingError.invalidValue(
                    decimal,
                    EncodingError.Context(
                        codingPath: codingPath,
                        debugDescription:
                            "Unable to encode Decimal NaN at \(URLEncodedFormEncoder.describe(codingPath)): "
                            + "form encoding has no representation for NaN."
                    ))
            }
            node.setScalar(decimal.description)
        case let dictionary as any FormEncodableDictionary where !dictionary.hasStringKeys:
            // Swift encodes such a dictionary as a flat array of keys and values, in hash order (which changes from
            // one run to the next): `f[]=open&f[]=1&f[]=closed&f[]=0`, meaningless to a server.
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "Unable to encode \(T.self) at \(URLEncodedFormEncoder.describe(codingPath)): "
                        + "its keys of type \(dictionary.keyTypeName) are neither String nor Int nor "
                        + "CodingKeyRepresentable, so Swift encodes it as a flat array of keys and values in an order "
                        + "that changes from run to run; use a [String: Value] dictionary, or make the key type "
                        + "CodingKeyRepresentable."
                ))
        case let set as any FormEncodableSortedSet where options.keyOrdering == .sorted:
            // A set's own order is its hash order, which changes from one run to the next: sorted, the same query
            // (and cache key, and signature) on every run.
            try set.encodeSorted(to: encoder(for: node, at: codingPath))
        default:
            try value.encode(to: encoder(for: node, at: codingPath))
        }
    }
}

extension FormEncodingEncoder {
    /// One value in the encoded tree: nothing yet, `nil`, a scalar, a keyed value or an array.
    final class Node {
        enum Kind { case empty, null, scalar, keyed, unkeyed }

        private(set) var kind = Kind.empty
        private(set) var scalar = ""
        /// For `.keyed`, the keys in encoding order; empty otherwise.
        private(set) var keys: [String] = []
        /// For `.keyed`, the value of `keys[i]` at index `i`; for `.unkeyed`, the elements.
        private(set) var children: [Node] = []
        private var indexByKey: [String: Int] = [:]

        func setNull() {
            reset(to: .null)
        }

        func setScalar(_ text: String) {
            reset(to: .scalar)
            scalar = text
        }

        /// Makes this node keyed, keeping its entries if it already is.
        func makeKeyed() {
            if kind != .keyed {
                reset(to: .keyed)
            }
        }

        /// Makes this node an array, keeping its elements if it already is.
        func makeUnkeyed() {
            if kind != .unkeyed {
                reset(to: .unkeyed)
            }
        }

        /// Returns the node for `key`, appending it if new. An existing entry keeps its position; with
        /// `replacing` its value starts over, otherwise it is reused (so nested containers merge).
        func child(forKey key: String, replacing: Bool) -> Node {
            makeKeyed()
            if let index = indexByKey[key] {
                if replacing {
                    children[index] = Node()
                }
                return children[index]
            }
            let node = Node()
            indexByKey[key] = keys.count
            keys.append(key)
            children.append(node)
            return node
        }

        /// Appends a new array element and returns it.
        func appendChild() -> Node {
            makeUnkeyed()
            let node = Node()
            children.append(node)
            return node
        }

        private func reset(to kind: Kind) {
            self.kind = kind
            scalar = ""
            keys = []
            children = []
            indexByKey = [:]
        }
    }

    /// Coding keys the encoder creates itself: array indices and `super`.
    struct FormKey: CodingKey {
        let stringValue: String
        let intValue: Int?

        init(stringValue: String) {
            self.stringValue = stringValue
            self.intValue = nil
        }

        init(intValue: Int) {
            self.stringValue = "Index \(intValue)"
            self.intValue = intValue
        }

        static let superKey = FormKey(stringValue: "super")
    }
}

// MARK: - Containers

extension FormEncodingEncoder {
    /// Writes keyed values into a `.keyed` node. `encodeIfPresent` records `nil` (instead of skipping the key)
    /// so that ``URLEncodedFormEncoder/NilEncoding/emptyValue`` also covers synthesized optional properties.
    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: FormEncodingEncoder
        var codingPath: [any CodingKey] { encoder.codingPath }

        private var options: URLEncodedFormEncoder { encoder.options }
        private func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }
        /// A fresh value for `key`; a repeated key keeps its position but loses its old value.
        private func slot(_ key: Key) -> Node { encoder.node.child(forKey: key.stringValue, replacing: true) }
        private func set(_ text: String, _ key: Key) { slot(key).setScalar(text) }
        private func set(float value: some BinaryFloatingPoint & CustomStringConvertible, _ key: Key) throws {
            try set(options.text(for: value, at: path(key)), key)
        }
        /// An encoder for the existing value of `key`, so repeated nested containers merge.
        private func reuse(_ key: Key) -> FormEncodingEncoder {
            encoder.encoder(for: encoder.node.child(forKey: key.stringValue, replacing: false), at: path(key))
        }

        mutating func encodeNil(forKey key: Key) throws { slot(key).setNull() }
        mutating func encode(_ value: Bool, forKey key: Key) throws { set(options.text(for: value), key) }
        mutating func encode(_ value: String, forKey key: Key) throws { set(value, key) }
        mutating func encode(_ value: Double, forKey key: Key) throws { try set(float: value, key) }
        mutating func encode(_ value: Float, forKey key: Key) throws { try set(float: value, key) }
        mutating func encode(_ value: Int, forKey key: Key) throws { set(String(value), key) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { set(String(value), key) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { set(String(value), key) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { set(String(value), key) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { set(String(value), key) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { set(String(value), key) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { set(String(value), key) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { set(String(value), key) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { set(String(value), key) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { set(String(value), key) }
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        mutating func encode(_ value: Int128, forKey key: Key) throws { set(String(value), key) }
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        mutating func encode(_ value: UInt128, forKey key: Key) throws { set(String(value), key) }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try encoder.encodeValue(value, into: slot(key), codingPath: path(key))
        }

        mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try present(value, key) }
        mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try present(value, key) }
        mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try present(value, key) }
        mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try present(value, key) }
        mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try present(value, key) }
        mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try present(value, key) }
        mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try present(value, key) }
        mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try present(value, key) }
        mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try present(value, key) }
        mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try present(value, key) }
        mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try present(value, key) }
        mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try present(value, key) }
        mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try present(value, key) }
        mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try present(value, key) }
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        mutating func encodeIfPresent(_ value: Int128?, forKey key: Key) throws { try present(value, key) }
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        mutating func encodeIfPresent(_ value: UInt128?, forKey key: Key) throws { try present(value, key) }
        mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws { try present(value, key) }

        private mutating func present<T: Encodable>(_ value: T?, _ key: Key) throws {
            guard let value else {
                return try encodeNil(forKey: key)
            }
            try encode(value, forKey: key)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            reuse(key).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            reuse(key).unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            let key = FormKey.superKey
            let node = encoder.node.child(forKey: key.stringValue, replacing: false)
            return encoder.encoder(for: node, at: codingPath + [key])
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder { reuse(key) }
    }

    /// Appends array elements to an `.unkeyed` node.
    struct UnkeyedContainer: UnkeyedEncodingContainer {
        let encoder: FormEncodingEncoder
        var codingPath: [any CodingKey] { encoder.codingPath }
        var count: Int { encoder.node.kind == .unkeyed ? encoder.node.children.count : 0 }

        private var options: URLEncodedFormEncoder { encoder.options }
        private var nextPath: [any CodingKey] { codingPath + [FormKey(intValue: count)] }
        private func append(_ text: String) { encoder.node.appendChild().setScalar(text) }

        mutating func encodeNil() throws { encoder.node.appendChild().setNull() }
        mutating func encode(_ value: Bool) throws { append(options.text(for: value)) }
        mutating func encode(_ value: String) throws { append(value) }
        mutating func encode(_ value: Double) throws { try append(options.text(for: value, at: nextPath)) }
        mutating func encode(_ value: Float) throws { try append(options.text(for: value, at: nextPath)) }
        mutating func encode(_ value: Int) throws { append(String(value)) }
        mutating func encode(_ value: Int8) throws { append(String(value)) }
        mutating func encode(_ value: Int16) throws { append(String(value)) }
        mutating func encode(_ value: Int32) throws { append(String(value)) }
        mutating func encode(_ value: Int64) throws { append(String(value)) }
        mutating func encode(_ value: UInt) throws { append(String(value)) }
        mutating func encode(_ value: UInt8) throws { append(String(value)) }
        mutating func encode(_ value: UInt16) throws { append(String(value)) }
        mutating func encode(_ value: UInt32) throws { append(String(value)) }
        mutating func encode(_ value: UInt64) throws { append(String(value)) }
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        mutating func encode(_ value: Int128) throws { append(String(value)) }
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        mutating func encode(_ value: UInt128) throws { append(String(value)) }

        mutating func encode<T: Encodable>(_ value: T) throws {
            let path = nextPath
            try encoder.encodeValue(value, into: encoder.node.appendChild(), codingPath: path)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type
        ) -> KeyedEncodingContainer<NestedKey> {
            superEncoder().container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            superEncoder().unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            let path = nextPath
            return encoder.encoder(for: encoder.node.appendChild(), at: path)
        }
    }

    /// Writes one value into the encoder's own node.
    struct SingleValueContainer: SingleValueEncodingContainer {
        let encoder: FormEncodingEncoder
        var codingPath: [any CodingKey] { encoder.codingPath }

        private var options: URLEncodedFormEncoder { encoder.options }
        private func set(_ text: String) { encoder.node.setScalar(text) }

        mutating func encodeNil() throws { encoder.node.setNull() }
        mutating func encode(_ value: Bool) throws { set(options.text(for: value)) }
        mutating func encode(_ value: String) throws { set(value) }
        mutating func encode(_ value: Double) throws { try set(options.text(for: value, at: codingPath)) }
        mutating func encode(_ value: Float) throws { try set(options.text(for: value, at: codingPath)) }
        mutating func encode(_ value: Int) throws { set(String(value)) }
        mutating func encode(_ value: Int8) throws { set(String(value)) }
        mutating func encode(_ value: Int16) throws { set(String(value)) }
        mutating func encode(_ value: Int32) throws { set(String(value)) }
        mutating func encode(_ value: Int64) throws { set(String(value)) }
        mutating func encode(_ value: UInt) throws { set(String(value)) }
        mutating func encode(_ value: UInt8) throws { set(String(value)) }
        mutating func encode(_ value: UInt16) throws { set(String(value)) }
        mutating func encode(_ value: UInt32) throws { set(String(value)) }
        mutating func encode(_ value: UInt64) throws { set(String(value)) }
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        mutating func encode(_ value: Int128) throws { set(String(value)) }
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        mutating func encode(_ value: UInt128) throws { set(String(value)) }

        mutating func encode<T: Encodable>(_ value: T) throws {
            try encoder.encodeValue(value, into: encoder.node, codingPath: codingPath)
        }
    }
}

/// A dictionary, for ``FormEncodingEncoder`` to see what Swift's `Encodable` conformance will make of its keys.
private protocol FormEncodableDictionary {
    /// Whether Swift encodes the dictionary as keys and values (`String`, `Int` or `CodingKeyRepresentable` keys)
    /// rather than as a flat array of keys and values.
    var hasStringKeys: Bool { get }
    /// The key type's name, for the error.
    var keyTypeName: String { get }
}

extension Dictionary: FormEncodableDictionary where Key: Encodable, Value: Encodable {
    fileprivate var hasStringKeys: Bool {
        Key.self == String.self || Key.self == Int.self || Key.self is any CodingKeyRepresentable.Type
    }

    fileprivate var keyTypeName: String { "\(Key.self)" }
}

/// A set whose elements can be sorted, for ``FormEncodingEncoder`` to encode in a fixed order.
private protocol FormEncodableSortedSet {
    /// Encodes the elements in ascending order, as an array.
    func encodeSorted(to encoder: any Encoder) throws
}

extension Set: FormEncodableSortedSet where Element: Encodable & Comparable {
    fileprivate func encodeSorted(to encoder: any Encoder) throws {
        try sorted().encode(to: encoder)
    }
}
