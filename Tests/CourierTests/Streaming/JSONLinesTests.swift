import Courier
import Foundation
import Testing

private struct Entry: Decodable, Sendable, Equatable {
    var level: String
}

@Suite("JSONLines and lines()", .timeLimit(.minutes(1)))
struct JSONLinesTests {
    @Test(
        "JSON Lines with LF or CRLF, empty lines, a last line without a line end, however cut",
        arguments: [
            "{\"level\":\"info\"}\n{\"level\":\"warn\"}\n",
            "{\"level\":\"info\"}\r\n{\"level\":\"warn\"}\r\n",
            "\n{\"level\":\"info\"}\n\n\r\n{\"level\":\"warn\"}",
            "{\"level\":\"info\"}\r\n\r\n{\"level\":\"warn\"}\r\n\n",
        ])
    func decodes(_ text: String) async throws {
        for chunks in [[text.bytes], Chunking.byteByByte(text.bytes)] + Chunking.everySplit(text.bytes) {
            let entries = try await ServerSentEventsTests.collect(
                ChunkSequence(chunks: chunks).jsonLines(of: Entry.self))
            #expect(entries == [Entry(level: "info"), Entry(level: "warn")])
        }
    }

    @Test("a line that does not decode fails with decodingFailed naming its line number and size, not its text")
    func decodingFailure() async throws {
        let text = "{\"level\":\"info\"}\n\n{\"level\":\"password=hunter2\",\"x\":1\n"
        var entries = ChunkSequence(chunks: [text.bytes]).jsonLines(of: Entry.self).makeAsyncIterator()
        #expect(try await entries.next() == Entry(level: "info"))
        let error = try #require(await #expect(throws: CourierError.self) { _ = try await entries.next() })
        #expect(error.code == .decodingFailed)
        #expect(error.stage == .parse)
        #expect(error.message?.hasPrefix("line 3 of the stream (33 bytes) is not a valid Entry") == true, "\(error)")
        #expect(!"\(error)".contains("hunter2"))
        #expect(try await entries.next() == nil)
    }

    @Test("an oversized line fails with lineTooLarge after the values before it")
    func oversizedLine() async throws {
        let text = "{\"level\":\"info\"}\n{\"level\":\"" + String(repeating: "x", count: 100) + "\"}\n"
        for chunks in [[text.bytes], Chunking.byteByByte(text.bytes)] {
            var entries = ChunkSequence(chunks: chunks)
                .jsonLines(of: Entry.self, limits: StreamLimits(maximumLineLength: 64)).makeAsyncIterator()
            #expect(try await entries.next() == Entry(level: "info"))
            let error = await #expect(throws: CourierError.self) { _ = try await entries.next() }
            #expect(error?.code == .lineTooLarge)
            #expect(error?.message?.contains("maximumLineLength (64 bytes)") == true)
        }
    }

    @Test("a custom decoder is used")
    func customDecoder() async throws {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        struct Row: Decodable, Sendable, Equatable { var userName: String }
        let rows = try await ServerSentEventsTests.collect(
            ChunkSequence(chunks: ["{\"user_name\":\"a\"}\n".bytes]).jsonLines(of: Row.self, decoder: decoder))
        #expect(rows == [Row(userName: "a")])
    }

    @Test("lines() keeps empty lines unless asked, decodes UTF-8 leniently, however cut")
    func lines() async throws {
        let text = "a\r\n\nb".bytes + [0xFF] + "\n\r\nc".bytes
        for chunks in [[text], Chunking.byteByByte(text)] + Chunking.everySplit(text) {
            let all = try await ServerSentEventsTests.collect(ChunkSequence(chunks: chunks).lines())
            #expect(all == ["a", "", "b\u{FFFD}", "", "c"])
            let nonEmpty = try await ServerSentEventsTests.collect(
                ChunkSequence(chunks: chunks).lines(skipsEmptyLines: true))
            #expect(nonEmpty == ["a", "b\u{FFFD}", "c"])
        }
    }

    @Test("lines() fails with lineTooLarge after the lines before it")
    func linesTooLarge() async throws {
        var lines = ChunkSequence(chunks: ["ok\ntoo long\n".bytes]).lines(limits: StreamLimits(maximumLineLength: 4))
            .makeAsyncIterator()
        #expect(try await lines.next() == "ok")
        let error = await #expect(throws: CourierError.self) { _ = try await lines.next() }
        #expect(error?.code == .lineTooLarge)
    }
}
