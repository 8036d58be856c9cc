/// An ordered list of header fields as a request declares them, validated before anything is sent.
///
/// Unlike `HTTPFields`, which silently replaces illegal bytes, Courier checks every name and value when it
/// builds the request: a value with CR, LF, NUL or another control character (HTAB is allowed), or a name that is
/// not an RFC 9110 token, fails the request with ``CourierError/Code/invalidHeader`` before a byte is written.
///
/// ```swift
/// var headers: RequestHeaders { ["Accept": "application/json", "X-Request-ID": id] }
/// ```
public struct RequestHeaders: Hashable, Sendable, ExpressibleByDictionaryLiteral, Sequence {
    /// One header field: a name and a value.
    public struct Field: Hashable, Sendable {
        /// The field name, as written.
        public var name: String
        /// The field value, as written.
        public var value: String

        /// Creates a field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The fields, in order. Repeated names are kept and sent as separate fields.
    public var fields: [Field]

    /// Creates a header list from fields.
    public init(_ fields: [Field] = []) { self.fields = fields }

    /// Creates a header list from a dictionary literal, keeping the literal's order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// Whether there are no fields.
    public var isEmpty: Bool { fields.isEmpty }

    /// Appends a field.
    public mutating func append(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }
}
