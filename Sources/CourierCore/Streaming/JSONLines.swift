public import Foundation

extension AsyncSequence where Element: Collection<UInt8> {
    /// The stream's JSON Lines (NDJSON) values, decoded as the chunks arrive.
    ///
    /// Each line is one JSON value, decoded when it is handed out. Lines end with LF or CRLF; the last line needs
    /// no line end; empty lines are skipped. The next chunk is pulled only when the values of the last one have
    /// been consumed, and ending the iteration (a `break`, a cancelled task) stops pulling.
    ///
    /// ```swift
    /// for try await entry in body.jsonLines(of: LogEntry.self) {
    ///     print(entry.message)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - type: The type each line decodes to.
    ///   - decoder: The JSON decoder.
    ///   - limits: The limits; only ``StreamLimits/maximumLineLength`` applies.
    /// - Returns: A sequence that throws ``CourierError/Code/lineTooLarge`` when a line grows past the limit (after
    ///   the values before it), ``CourierError/Code/decodingFailed`` (stage ``CourierError/Stage/parse``) for a
    ///   line that does not decode, naming its line number and size but not its text, what the base sequence
    ///   throws, and `CancellationError`.
    public func jsonLines<Value: Decodable & Sendable>(
        of type: Value.Type,
        decoder: JSONDecoder = JSONDecoder(),
        limits: StreamLimits = .standard
    ) -> JSONLines<Self, Value> {
        JSONLines(base: self, decoder: decoder, limits: limits)
    }

    /// The stream's lines as text, split as the chunks arrive.
    ///
    /// Lines end with LF or CRLF, and the last line needs no line end. Each line is decoded as UTF-8, an invalid
    /// sequence becoming U+FFFD.
    ///
    /// ```swift
    /// for try await line in body.lines() where line.hasPrefix("ERROR") { print(line) }
    /// ```
    ///
    /// - Parameters:
    ///   - limits: The limits; only ``StreamLimits/maximumLineLength`` applies.
    ///   - skipsEmptyLines: Whether empty lines are dropped rather than handed out as `""`.
    /// - Returns: A sequence that throws ``CourierError/Code/lineTooLarge`` when a line grows past the limit (after
    ///   the lines before it), what the base sequence throws, and `CancellationError`.
    public func lines(limits: StreamLimits = .standard, skipsEmptyLines: Bool = false) -> TextLines<Self> {
        TextLines(base: self, splitter: LineSplitter(limits: limits, skipsEmptyLines: skipsEmptyLines))
    }
}

/// The values of a JSON Lines stream of byte chunks; see ``_Concurrency/AsyncSequence/jsonLines(of:decoder:limits:)``.
public struct JSONLines<Base: AsyncSequence, Value: Decodable & Sendable>: AsyncSequence
where Base.Element: Collection<UInt8> {
    /// A decoded line.
    public typealias Element = Value

    let base: Base
    let decoder: JSONDecoder
    let limits: StreamLimits

    /// Returns an iterator over the values, which starts pulling chunks when first asked for a value.
    public func makeAsyncIterator() -> AsyncIterator {
        let splitter = LineSplitter(limits: limits, skipsEmptyLines: true)
        let pump = ChunkPump(base: base.makeAsyncIterator(), parser: RawLines(splitter: splitter))
        return AsyncIterator(pump: pump, decoder: decoder)
    }

    /// Hands out the values of one iteration of the stream.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var pump: ChunkPump<Base.AsyncIterator, RawLines>
        let decoder: JSONDecoder
        var ended = false

        /// The next value, or `nil` once the stream ended (or threw).
        ///
        /// - Throws: ``CourierError/Code/lineTooLarge``, ``CourierError/Code/decodingFailed``, what the base
        ///   sequence throws, or `CancellationError`.
        public mutating func next() async throws -> Value? {
            guard !ended, let line = try await pump.next() else { return nil }
            return try decode(line)
        }

        /// The next value, or `nil` once the stream ended, on the caller's actor.
        ///
        /// - Parameter actor: The caller's actor, which the iteration never leaves but to pull a chunk.
        /// - Throws: What ``next()`` throws.
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> Value? {
            guard !ended, let line = try await pump.next(isolation: actor) else { return nil }
            return try decode(line)
        }

        private mutating func decode(_ line: RawLines.Line) throws -> Value {
            do {
                return try decoder.decode(Value.self, from: line.bytes)
            } catch {
                ended = true
                throw CourierError(
                    code: .decodingFailed,
                    stage: .parse,
                    message: "line \(line.number) of the stream (\(line.bytes.count) bytes) is not a valid "
                        + "\(Value.self): \(DecodingErrorDescription(error))",
                    underlyingError: error
                )
            }
        }
    }
}

extension JSONLines: Sendable where Base: Sendable {}

/// The text lines of a stream of byte chunks; see
/// ``_Concurrency/AsyncSequence/lines(limits:skipsEmptyLines:)``.
public struct TextLines<Base: AsyncSequence>: AsyncSequence where Base.Element: Collection<UInt8> {
    /// A line, without its line end.
    public typealias Element = String

    let base: Base
    let splitter: LineSplitter

    /// Returns an iterator over the lines, which starts pulling chunks when first asked for a line.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(pump: ChunkPump(base: base.makeAsyncIterator(), parser: splitter))
    }

    /// Hands out the lines of one iteration of the stream.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var pump: ChunkPump<Base.AsyncIterator, LineSplitter>

        /// The next line, or `nil` once the stream ended (or threw).
        ///
        /// - Throws: ``CourierError/Code/lineTooLarge``, what the base sequence throws, or `CancellationError`.
        public mutating func next() async throws -> String? {
            try await pump.next()
        }

        /// The next line, or `nil` once the stream ended, on the caller's actor.
        ///
        /// - Parameter actor: The caller's actor, which the iteration never leaves but to pull a chunk.
        /// - Throws: What ``next()`` throws.
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> String? {
            try await pump.next(isolation: actor)
        }
    }
}

extension TextLines: Sendable where Base: Sendable {}

extension LineSplitter: ChunkParsing {
    mutating func parse(_ chunk: some Collection<UInt8>, into outputs: inout [String]) throws {
        try withLines(in: chunk) { line, _ in outputs.append(String(decoding: line, as: UTF8.self)) }
    }

    mutating func finish(into outputs: inout [String]) throws {
        try withLastLine { line, _ in outputs.append(String(decoding: line, as: UTF8.self)) }
    }
}

/// Lines as bytes with their line numbers, for decoding.
struct RawLines: ChunkParsing {
    /// A line and its number in the stream (from 1, counting empty lines).
    struct Line {
        var number: Int
        var bytes: Data
    }

    var splitter: LineSplitter

    mutating func parse(_ chunk: some Collection<UInt8>, into outputs: inout [Line]) throws {
        try splitter.withLines(in: chunk) { outputs.append(Line(number: $1, bytes: Data(buffer: $0))) }
    }

    mutating func finish(into outputs: inout [Line]) throws {
        try splitter.withLastLine { outputs.append(Line(number: $1, bytes: Data(buffer: $0))) }
    }
}
