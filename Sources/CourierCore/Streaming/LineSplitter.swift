/// Splits a byte stream into lines as it arrives, for JSON Lines, NDJSON and plain text lines.
///
/// Feed it the body's chunks in order with ``split(_:into:)``, then call ``finish(into:)`` once the body ended.
/// A line ends at a line feed (LF); a carriage return (CR) just before it is removed too, so CRLF files split the
/// same way. A last line without a line feed is still a line (JSON Lines allows it). Lines are bytes; they may hold
/// any UTF-8, or none.
///
/// ```swift
/// var splitter = LineSplitter(skipsEmptyLines: true)
/// for try await chunk in body {
///     try splitter.split(chunk) { line in print(String(decoding: line, as: UTF8.self)) }
/// }
/// try splitter.finish { line in print(String(decoding: line, as: UTF8.self)) }
/// ```
///
/// The splitter keeps only the unfinished part of a line between chunks, never more than
/// ``StreamLimits/maximumLineLength`` plus one byte. Splitting is synchronous and the same whatever the chunk
/// boundaries are: the same lines come out, and a limit fires at the same line.
public struct LineSplitter: Sendable {
    /// The limits; only ``StreamLimits/maximumLineLength`` applies.
    public let limits: StreamLimits
    /// Whether empty lines (nothing, or only a CR, before the LF) are dropped instead of handed out.
    public let skipsEmptyLines: Bool
    /// How many lines have ended so far, empty and skipped ones included: the number of the last line handed out.
    public private(set) var lineCount = 0

    /// The start of a line whose end has not arrived yet.
    private var partial: [UInt8] = []

    /// Creates a splitter for one stream.
    ///
    /// - Parameters:
    ///   - limits: The limits; only ``StreamLimits/maximumLineLength`` applies.
    ///   - skipsEmptyLines: Whether empty lines are dropped (JSON Lines does) rather than handed out as `[]`.
    public init(limits: StreamLimits = .standard, skipsEmptyLines: Bool = false) {
        self.limits = limits
        self.skipsEmptyLines = skipsEmptyLines
    }

    /// Splits the next chunk of the stream, handing each line it completes to `body`, in order, without its line
    /// end.
    ///
    /// - Parameters:
    ///   - bytes: The next bytes of the stream, however they were chunked.
    ///   - body: Called with each complete line; an error it throws stops splitting and is rethrown.
    /// - Throws: ``CourierError/Code/lineTooLarge`` (stage ``CourierError/Stage/parse``) when a line grows past
    ///   ``StreamLimits/maximumLineLength``; the lines before it have been handed out. The splitter is not usable
    ///   after it throws.
    public mutating func split(_ bytes: some Collection<UInt8>, into body: ([UInt8]) throws -> Void) throws {
        try withLines(in: bytes) { line, _ in try body(Array(line)) }
    }

    /// Splits the next chunk of the stream and returns the lines it completes.
    ///
    /// - Parameter bytes: The next bytes of the stream.
    /// - Returns: The complete lines, without their line ends.
    /// - Throws: ``CourierError/Code/lineTooLarge``, as ``split(_:into:)`` does.
    public mutating func split(_ bytes: some Collection<UInt8>) throws -> [[UInt8]] {
        var lines: [[UInt8]] = []
        try withLines(in: bytes) { line, _ in lines.append(Array(line)) }
        return lines
    }

    /// Ends the stream: hands out its last line when bytes came after the last line feed.
    ///
    /// The splitter is then ready for another stream; ``lineCount`` keeps counting.
    ///
    /// - Parameter body: Called with the last line, if there is one (and it is not a skipped empty line).
    /// - Throws: ``CourierError/Code/lineTooLarge`` when that last line is too long, or what `body` throws.
    public mutating func finish(into body: ([UInt8]) throws -> Void) throws {
        try withLastLine { line, _ in try body(Array(line)) }
    }

    /// Ends the stream and returns its last line: the bytes after the last line feed, if any.
    ///
    /// - Returns: The last line, or `nil` when the stream ended with a line feed (or the line is a skipped empty
    ///   one).
    /// - Throws: ``CourierError/Code/lineTooLarge`` when that last line is too long.
    public mutating func finish() throws -> [UInt8]? {
        var last: [UInt8]?
        try withLastLine { line, _ in last = Array(line) }
        return last
    }

    /// Splits `bytes`, lending each complete line and its number to `body` (the bytes are valid only during the
    /// call).
    mutating func withLines(
        in bytes: some Collection<UInt8>,
        _ body: (UnsafeBufferPointer<UInt8>, Int) throws -> Void
    ) throws {
        let done: Void? = try bytes.withContiguousStorageIfAvailable { try split(buffer: $0, body) }
        if done == nil {
            try Array(bytes).withUnsafeBufferPointer { try split(buffer: $0, body) }
        }
    }

    /// Ends the stream, lending its last line, if any, and its number to `body`.
    mutating func withLastLine(_ body: (UnsafeBufferPointer<UInt8>, Int) throws -> Void) throws {
        guard !partial.isEmpty else { return }
        var last: [UInt8] = []
        swap(&last, &partial)
        lineCount += 1
        let (limit, skipsEmpty, number) = (limits.maximumLineLength, skipsEmptyLines, lineCount)
        try last.withUnsafeBufferPointer {
            try Self.deliver($0, number: number, limit: limit, skipsEmpty: skipsEmpty, to: body)
        }
    }

    private mutating func split(
        buffer: UnsafeBufferPointer<UInt8>,
        _ body: (UnsafeBufferPointer<UInt8>, Int) throws -> Void
    ) throws {
        guard let base = buffer.baseAddress else { return }
        let (end, limit, skipsEmpty) = (buffer.count, limits.maximumLineLength, skipsEmptyLines)
        var start = 0
        while start < end {
            let lineFeed = LineEnds.firstLineFeed(in: base, from: start, to: end)
            let piece = UnsafeBufferPointer(start: base + start, count: lineFeed - start)
            guard lineFeed < end else {
                partial.append(contentsOf: piece)
                try checkPartial()
                return
            }
            lineCount += 1
            let number = lineCount
            if partial.isEmpty {
                try Self.deliver(piece, number: number, limit: limit, skipsEmpty: skipsEmpty, to: body)
            } else {
                var line: [UInt8] = []
                swap(&line, &partial)
                line.append(contentsOf: piece)
                try line.withUnsafeBufferPointer {
                    try Self.deliver($0, number: number, limit: limit, skipsEmpty: skipsEmpty, to: body)
                }
                line.removeAll(keepingCapacity: line.capacity <= LineEnds.retainedCapacity)
                swap(&line, &partial)
            }
            start = lineFeed + 1
        }
    }

    /// Fails as soon as the unfinished line is sure to be too long: past the limit by more than a CR.
    private func checkPartial() throws {
        let limit = limits.maximumLineLength
        let count = partial.count
        guard count > limit else { return }
        if count == limit + 1, partial.last == LineEnds.carriageReturn { return }
        let length = partial.last == LineEnds.carriageReturn ? count - 1 : count
        throw CourierError.lineTooLarge(length: length, exact: false, limit: limit)
    }

    /// Hands `line` to `body` without a trailing CR, unless it is too long or a skipped empty line.
    private static func deliver(
        _ line: UnsafeBufferPointer<UInt8>,
        number: Int,
        limit: Int,
        skipsEmpty: Bool,
        to body: (UnsafeBufferPointer<UInt8>, Int) throws -> Void
    ) throws {
        var count = line.count
        if count > 0, line[count - 1] == LineEnds.carriageReturn { count -= 1 }
        guard count <= limit else { throw CourierError.lineTooLarge(length: count, exact: true, limit: limit) }
        guard count > 0 || !skipsEmpty else { return }
        try body(UnsafeBufferPointer(rebasing: line[0..<count]), number)
    }
}

/// Finding line ends in bytes, eight at a time.
enum LineEnds {
    static let lineFeed: UInt8 = 0x0A
    static let carriageReturn: UInt8 = 0x0D
    /// The most capacity a line or event buffer keeps for the next one after a big one.
    static let retainedCapacity = 64 * 1024

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// Whether any byte of `word` is zero (exact; which one is for the byte loop to find).
    @inline(__always)
    private static func hasZeroByte(_ word: UInt64) -> Bool {
        (word &- ones) & ~word & highBits != 0
    }

    /// The index of the first LF in `base[start..<end]`, or `end`.
    @inline(__always)
    static func firstLineFeed(in base: UnsafePointer<UInt8>, from start: Int, to end: Int) -> Int {
        firstIndex(in: base, from: start, to: end, orCarriageReturn: false)
    }

    /// The index of the first CR or LF in `base[start..<end]`, or `end`.
    @inline(__always)
    static func firstLineEnd(in base: UnsafePointer<UInt8>, from start: Int, to end: Int) -> Int {
        firstIndex(in: base, from: start, to: end, orCarriageReturn: true)
    }

    /// The index of the first LF (or CR, when asked) in `base[start..<end]`, or `end`: eight bytes at a time, then
    /// one at a time within the word that holds it.
    @inline(__always)
    private static func firstIndex(
        in base: UnsafePointer<UInt8>,
        from start: Int,
        to end: Int,
        orCarriageReturn: Bool
    ) -> Int {
        var index = start
        let raw = UnsafeRawPointer(base)
        while index + 8 <= end {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            if hasZeroByte(word ^ (ones &* UInt64(lineFeed))) { break }
            if orCarriageReturn, hasZeroByte(word ^ (ones &* UInt64(carriageReturn))) { break }
            index += 8
        }
        while index < end, base[index] != lineFeed, !orCarriageReturn || base[index] != carriageReturn { index += 1 }
        return index
    }
}
