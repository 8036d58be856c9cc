/// Encodes an `Encodable` value as `application/x-www-form-urlencoded` text or URL query text.
///
/// The top-level value must be keyed (a struct or a `[String: Value]` dictionary). Nested keyed values are
/// flattened with brackets (`user[name]=Ann`, deeper `a[b][c]=d`), arrays follow ``arrayEncoding``, and empty
/// arrays or objects emit nothing. Names and values are percent-encoded per RFC 3986: only unreserved
/// characters (`A-Z a-z 0-9 - . _ ~`) stay literal, everything else becomes UTF-8 `%XX` with uppercase hex.
/// By default keys are sorted at every level, so the output is deterministic.
///
/// ```swift
/// struct Search: Encodable {
///     var query: String
///     var tags: [String]
///     var page: Int?
/// }
///
/// let encoder = URLEncodedFormEncoder()
/// let query = try encoder.encode(Search(query: "swift http", tags: ["a+b", "c"], page: nil))
/// // "query=swift%20http&tags%5B%5D=a%2Bb&tags%5B%5D=c"
/// ```
///
/// Errors are `EncodingError.invalidValue` values whose context carries the coding path, which the
/// debug description also spells out (for example `user.tags[1]`).
public struct URLEncodedFormEncoder: Sendable {
    /// How array elements are named. Defaults to ``ArrayEncoding/brackets``.
    public var arrayEncoding: ArrayEncoding
    /// How `Bool` values are written. Defaults to ``BoolEncoding/literal``.
    public var boolEncoding: BoolEncoding
    /// How `Date` values are written. Defaults to ``DateEncoding/iso8601``.
    public var dateEncoding: DateEncoding
    /// How `Data` values are written. Defaults to ``DataEncoding/base64``.
    public var dataEncoding: DataEncoding
    /// How spaces are written. Defaults to ``SpaceEncoding/percentEscaped``.
    public var spaceEncoding: SpaceEncoding
    /// How `nil` values are written. Defaults to ``NilEncoding/dropKey``.
    public var nilEncoding: NilEncoding
    /// The order of keys within keyed values. Defaults to ``KeyOrdering/sorted``.
    public var keyOrdering: KeyOrdering

    /// Creates an encoder with the given strategies; every argument defaults to the recommended setting.
    public init(
        arrayEncoding: ArrayEncoding = .brackets,
        boolEncoding: BoolEncoding = .literal,
        dateEncoding: DateEncoding = .iso8601,
        dataEncoding: DataEncoding = .base64,
        spaceEncoding: SpaceEncoding = .percentEscaped,
        nilEncoding: NilEncoding = .dropKey,
        keyOrdering: KeyOrdering = .sorted
    ) {
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
        self.dateEncoding = dateEncoding
        self.dataEncoding = dataEncoding
        self.spaceEncoding = spaceEncoding
        self.nilEncoding = nilEncoding
        self.keyOrdering = keyOrdering
    }

    /// Encodes `value` into flattened name/value pairs, in final order and not percent-encoded.
    ///
    /// Names already include their brackets, e.g. `user[name]`, `tags[]` or `items[0][id]`.
    ///
    /// - Parameter value: A keyed value: a struct or a `[String: Value]` dictionary.
    /// - Returns: The pairs, in the order ``encode(_:)`` would emit them.
    /// - Throws: `EncodingError.invalidValue` if the top-level value is not keyed, a floating-point value
    ///   is infinite or NaN (`Decimal.nan` too), a dictionary's keys are not `String`, `Int` or
    ///   `CodingKeyRepresentable`, or a custom strategy fails.
    public func encodePairs(_ value: some Encodable) throws -> [(name: String, value: String)] {
        if let parameters = value as? Parameters, let pairs = parameters.flatPairs(using: self) {
            return pairs
        }
        let root = FormEncodingEncoder.Node()
        let encoder = FormEncodingEncoder(node: root, codingPath: [], options: self)
        try encoder.encodeValue(value, into: root, codingPath: [])
        guard root.kind == .keyed else {
            let context = EncodingError.Context(
                codingPath: [],
                debugDescription: "The top-level value must be a keyed container (a struct or a [String: Value] "
                    + "dictionary) to be form-encoded, but \(type(of: value)) did not encode one."
            )
            throw EncodingError.invalidValue(value, context)
        }
        var pairs: [(name: String, value: String)] = []
        for index in orderedIndices(of: root) {
            flatten(root.children[index], name: root.keys[index], into: &pairs)
        }
        return pairs
    }

    /// Encodes `value` into percent-encoded `name=value` pairs joined with `&`.
    ///
    /// - Parameter value: A keyed value: a struct or a `[String: Value]` dictionary.
    /// - Returns: The encoded text, without a leading `?`; empty when there are no pairs.
    /// - Throws: The errors of ``encodePairs(_:)``.
    public func encode(_ value: some Encodable) throws -> String {
        let pairs = try encodePairs(value)
        let spaceAsPlus = spaceEncoding == .plus
        var bytes: [UInt8] = []
        bytes.reserveCapacity(pairs.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 2 })
        for (offset, pair) in pairs.enumerated() {
            if offset > 0 {
                bytes.append(UInt8(ascii: "&"))
            }
            PercentEncoding.append(pair.name, allowing: .unreserved, spaceAsPlus: spaceAsPlus, to: &bytes)
            bytes.append(UInt8(ascii: "="))
            PercentEncoding.append(pair.value, allowing: .unreserved, spaceAsPlus: spaceAsPlus, to: &bytes)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: - Flattening

    private func flatten(
        _ node: FormEncodingEncoder.Node, name: String, into pairs: inout [(name: String, value: String)]
    ) {
        switch node.kind {
        case .empty:
            return
        case .null:
            if nilEncoding == .emptyValue {
                pairs.append((name: name, value: ""))
            }
        case .scalar:
            pairs.append((name: name, value: node.scalar))
        case .keyed:
            for index in orderedIndices(of: node) {
                flatten(node.children[index], name: name + "[" + node.keys[index] + "]", into: &pairs)
            }
        case .unkeyed:
            for (index, child) in node.children.enumerated() {
                flatten(child, name: elementName(name, index: index), into: &pairs)
            }
        }
    }

    /// The name of the element at `index` of the array named `name`, under ``arrayEncoding``.
    func elementName(_ name: String, index: Int) -> String {
        switch arrayEncoding {
        case .brackets: name + "[]"
        case .noBrackets: name
        case .indexed: name + "[" + String(index) + "]"
        }
    }

    /// Whether key `first` comes before `second` under ``KeyOrdering/sorted``: by their UTF-8 bytes.
    static func sortsBefore(_ first: String, _ second: String) -> Bool {
        first.utf8.lexicographicallyPrecedes(second.utf8)
    }

    private func orderedIndices(of node: FormEncodingEncoder.Node) -> [Int] {
        switch keyOrdering {
        case .encodingOrder:
            return Array(node.keys.indices)
        case .sorted:
            let keys = node.keys
            return keys.indices.sorted { Self.sortsBefore(keys[$0], keys[$1]) }
        }
    }
}
