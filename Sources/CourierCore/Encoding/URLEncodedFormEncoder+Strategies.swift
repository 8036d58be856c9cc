public import Foundation

extension URLEncodedFormEncoder {
    /// How array elements are named.
    public enum ArrayEncoding: Sendable, Hashable {
        /// Appends empty brackets to the name: `a[]=1&a[]=2`; arrays of objects give `a[][x]=1`. The default.
        case brackets
        /// Repeats the bare name: `a=1&a=2`; arrays of objects give `a[x]=1` once per element.
        case noBrackets
        /// Appends the zero-based element index: `a[0]=1&a[1]=2`; arrays of objects give `a[0][x]=1`.
        ///
        /// The index is the element's position in the array, so with ``NilEncoding/dropKey`` a dropped
        /// `nil` element leaves a gap (`a[0]=1&a[2]=3`).
        case indexed
    }

    /// How `Bool` values are written.
    public enum BoolEncoding: Sendable, Hashable {
        /// `true` / `false`. The default.
        case literal
        /// `1` / `0`.
        case numeric
    }

    /// How `Date` values are written.
    public enum DateEncoding: Sendable {
        /// ISO 8601 in UTC with whole seconds, e.g. `2024-01-02T03:04:05Z`. The default.
        ///
        /// Fractional seconds are truncated. The output is identical on every platform.
        case iso8601
        /// Seconds since 1970-01-01T00:00:00Z; whole values have no fraction (`1704164645`), others keep it
        /// (`1704164645.5`).
        case secondsSince1970
        /// Milliseconds since 1970-01-01T00:00:00Z, written like ``secondsSince1970``
        /// (`1704164645000`).
        case millisecondsSince1970
        /// The string returned by the closure.
        ///
        /// An `EncodingError` thrown by the closure is rethrown unchanged; any other error is wrapped in
        /// `EncodingError.invalidValue` carrying the coding path and the original error as `underlyingError`.
        case custom(@Sendable (Date) throws -> String)
    }

    /// How `Data` values are written.
    public enum DataEncoding: Sendable {
        /// Standard Base64 (with `+`, `/` and `=` padding, later percent-encoded). The default.
        case base64
        /// The string returned by the closure; errors are handled as for ``DateEncoding/custom(_:)``.
        case custom(@Sendable (Data) throws -> String)
    }

    /// How a space character in a name or value is written.
    public enum SpaceEncoding: Sendable, Hashable {
        /// `%20`. The default, and the only correct choice for URL query strings.
        case percentEscaped
        /// `+`, as HTML forms do. Use only for `application/x-www-form-urlencoded` bodies whose receiver
        /// expects it. A literal `+` is always written as `%2B`.
        case plus
    }

    /// How `nil` values are written.
    public enum NilEncoding: Sendable, Hashable {
        /// Omits the pair entirely. The default.
        case dropKey
        /// Writes the name with an empty value: `a=`.
        ///
        /// This also applies to optional properties of synthesized `Encodable` conformances, which encode
        /// through `encodeIfPresent`.
        case emptyValue
    }

    /// The order in which the keys of a keyed value (struct or dictionary) are emitted.
    ///
    /// Array elements always keep their order.
    public enum KeyOrdering: Sendable, Hashable {
        /// Keys are sorted at every level by their UTF-8 bytes (Unicode code-point order, so `B` precedes `a`
        /// and `10` precedes `9`). Dictionary input therefore gives identical output on every run and platform;
        /// so does a `Set` of `Comparable` elements, whose elements are sorted too (a set's own order changes from
        /// run to run). The default.
        case sorted
        /// Keys appear in the order the value's `encode(to:)` emits them. For a dictionary this order is
        /// unspecified and can change between runs.
        case encodingOrder
    }
}

// MARK: - Applying the strategies

extension URLEncodedFormEncoder {
    /// The text for `value` under ``boolEncoding``.
    func text(for value: Bool) -> String {
        switch boolEncoding {
        case .literal: value ? "true" : "false"
        case .numeric: value ? "1" : "0"
        }
    }

    /// The `description` of `value`; throws for infinity and NaN, naming `path`.
    func text<F: BinaryFloatingPoint & CustomStringConvertible>(
        for value: F, at path: [any CodingKey]
    ) throws -> String {
        guard value.isFinite else {
            let context = EncodingError.Context(
                codingPath: path,
                debugDescription: "Unable to encode \(F.self) value \(value) at \(Self.describe(path)): "
                    + "form encoding has no representation for infinity or NaN."
            )
            throw EncodingError.invalidValue(value, context)
        }
        return value.description
    }

    private static let iso8601 = Date.ISO8601FormatStyle()

    /// The text for `date` under ``dateEncoding``.
    func text(for date: Date, at path: [any CodingKey]) throws -> String {
        switch dateEncoding {
        case .iso8601:
            return Self.iso8601.format(date)
        case .secondsSince1970:
            return try Self.integralText(text(for: date.timeIntervalSince1970, at: path), date.timeIntervalSince1970)
        case .millisecondsSince1970:
            let milliseconds = date.timeIntervalSince1970 * 1000
            return try Self.integralText(text(for: milliseconds, at: path), milliseconds)
        case .custom(let format):
            return try custom(date, at: path, strategy: "date") { try format(date) }
        }
    }

    /// The text for `data` under ``dataEncoding``.
    func text(for data: Data, at path: [any CodingKey]) throws -> String {
        switch dataEncoding {
        case .base64:
            return data.base64EncodedString()
        case .custom(let format):
            return try custom(data, at: path, strategy: "data") { try format(data) }
        }
    }

    /// Renders a coding path like `user.tags[1]`.
    static func describe(_ path: [any CodingKey]) -> String {
        guard !path.isEmpty else {
            return "the top level"
        }
        var text = ""
        for key in path {
            if let key = key as? FormEncodingEncoder.FormKey, let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return text
    }

    /// Writes whole numbers without a fraction (`1704164645` rather than `1704164645.0`).
    private static func integralText(_ text: String, _ value: Double) -> String {
        guard value.rounded(.towardZero) == value, abs(value) < 9_007_199_254_740_992 else {
            return text
        }
        return String(Int64(value))
    }

    private func custom<V>(
        _ value: V, at path: [any CodingKey], strategy: String, _ body: () throws -> String
    ) throws -> String {
        do {
            return try body()
        } catch let error as EncodingError {
            throw error
        } catch {
            let context = EncodingError.Context(
                codingPath: path,
                debugDescription: "The custom \(strategy) encoding failed at \(Self.describe(path)): \(error)",
                underlyingError: error
            )
            throw EncodingError.invalidValue(value, context)
        }
    }
}
