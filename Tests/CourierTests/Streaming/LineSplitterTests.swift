import Courier
import Testing

/// A stream and the lines it splits into, with and without empty lines.
struct LineCase: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    let lines: [String]

    var testDescription: String { name }

    init(_ name: String, _ text: String, _ lines: [String]) {
        self.name = name
        self.bytes = text.bytes
        self.lines = lines
    }
}

let lineCases: [LineCase] = [
    .init("LF line ends", "a\nbc\n", ["a", "bc"]),
    .init("CRLF line ends lose their CR", "a\r\nbc\r\n", ["a", "bc"]),
    .init("a last line without a line end is a line", "a\nbc", ["a", "bc"]),
    .init("a last line with only a CR", "a\n\r", ["a", ""]),
    .init("empty lines", "\na\n\n\r\nb\n", ["", "a", "", "", "b"]),
    .init("a CR inside a line stays", "a\rb\n", ["a\rb"]),
    .init("only the last CR goes", "a\r\r\n", ["a\r"]),
    .init("an empty stream has no line", "", []),
    .init("a lone line feed is one empty line", "\n", [""]),
    .init("UTF-8 text", "día\n🚀\n", ["día", "🚀"]),
]

@Suite("LineSplitter", .timeLimit(.minutes(1)))
struct LineSplitterTests {
    static func split(_ chunks: [[UInt8]], limits: StreamLimits = .standard, skipsEmptyLines: Bool = false) throws
        -> [String]
    {
        var splitter = LineSplitter(limits: limits, skipsEmptyLines: skipsEmptyLines)
        var lines: [String] = []
        for chunk in chunks {
            try splitter.split(chunk) { lines.append(String(decoding: $0, as: UTF8.self)) }
        }
        try splitter.finish { lines.append(String(decoding: $0, as: UTF8.self)) }
        return lines
    }

    @Test("in one piece, cut at every byte boundary, and byte by byte", arguments: lineCases)
    func lines(_ spec: LineCase) throws {
        for chunks in [[spec.bytes], Chunking.byteByByte(spec.bytes)] + Chunking.everySplit(spec.bytes) {
            #expect(try Self.split(chunks) == spec.lines)
        }
    }

    @Test("skipping empty lines, however cut", arguments: lineCases)
    func skippingEmptyLines(_ spec: LineCase) throws {
        for chunks in [[spec.bytes], Chunking.byteByByte(spec.bytes)] + Chunking.everySplit(spec.bytes) {
            #expect(try Self.split(chunks, skipsEmptyLines: true) == spec.lines.filter { !$0.isEmpty })
        }
    }

    @Test("the returning variants give the same lines")
    func returningVariants() throws {
        var splitter = LineSplitter()
        #expect(try splitter.split("a\nb".bytes) == ["a".bytes])
        #expect(try splitter.split("c\r\nd".bytes) == ["bc".bytes])
        #expect(try splitter.finish() == "d".bytes)
        #expect(try splitter.finish() == nil)
        #expect(splitter.lineCount == 3)
    }

    @Test("lineCount counts skipped empty lines")
    func lineCount() throws {
        var splitter = LineSplitter(skipsEmptyLines: true)
        #expect(try splitter.split("\n\na\n\r\n".bytes) == ["a".bytes])
        #expect(splitter.lineCount == 4)
    }

    @Test(
        "a line over maximumLineLength fails with lineTooLarge after the lines before it, however cut",
        arguments: ["ab\nabcd\n", "ab\nabcd", "ab\nabc\r\r\n", "ab\n\r\rabcd"])
    func lineTooLarge(_ text: String) throws {
        for chunks in [[text.bytes], Chunking.byteByByte(text.bytes)] + Chunking.everySplit(text.bytes) {
            var lines: [String] = []
            var splitter = LineSplitter(limits: StreamLimits(maximumLineLength: 3))
            let error = #expect(throws: CourierError.self) {
                for chunk in chunks { try splitter.split(chunk) { lines.append(String(decoding: $0, as: UTF8.self)) } }
                try splitter.finish { lines.append(String(decoding: $0, as: UTF8.self)) }
            }
            #expect(error?.code == .lineTooLarge)
            #expect(error?.message?.contains("maximumLineLength (3 bytes)") == true)
            #expect(lines == ["ab"])
        }
    }

    @Test("a line exactly at the limit passes, its CR not counted, however cut")
    func exactlyAtTheLimit() throws {
        let text = "abc\r\nabc\nabc\r"
        for chunks in [[text.bytes], Chunking.byteByByte(text.bytes)] + Chunking.everySplit(text.bytes) {
            #expect(try Self.split(chunks, limits: StreamLimits(maximumLineLength: 3)) == ["abc", "abc", "abc"])
        }
    }

    @Test("a line still arriving is refused as soon as it is surely too long")
    func refusesEarly() throws {
        var splitter = LineSplitter(limits: StreamLimits(maximumLineLength: 4))
        _ = try splitter.split("abcd\r".bytes)  // may still be "abcd" and a CRLF
        let error = #expect(throws: CourierError.self) { _ = try splitter.split("e".bytes) }
        #expect(
            error?.message == "a line of the stream has at least 6 bytes so far, more than maximumLineLength (4 bytes)")
    }
}
