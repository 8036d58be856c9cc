import Courier
import Testing

/// One rule of the WHATWG event stream format: a stream and what a browser dispatches for it.
struct EventStreamCase: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    let events: [ServerSentEvent]
    var lastEventID: String? = nil
    var reconnectionTime: Duration? = nil

    var testDescription: String { name }

    init(
        _ name: String, _ bytes: [UInt8], _ events: [ServerSentEvent], lastEventID: String? = nil,
        reconnectionTime: Duration? = nil
    ) {
        self.name = name
        self.bytes = bytes
        self.events = events
        self.lastEventID = lastEventID
        self.reconnectionTime = reconnectionTime
    }

    init(
        _ name: String, _ text: String, _ events: [ServerSentEvent], lastEventID: String? = nil,
        reconnectionTime: Duration? = nil
    ) {
        self.init(name, text.bytes, events, lastEventID: lastEventID, reconnectionTime: reconnectionTime)
    }
}

private func message(_ data: String, id: String? = nil, type: String = "message", retry: Duration? = nil)
    -> ServerSentEvent
{
    ServerSentEvent(id: id, type: type, data: data, retry: retry)
}

/// Every rule, from the WHATWG HTML standard's "Parsing an event stream", "Interpreting an event stream" and its
/// examples.
let eventStreamCases: [EventStreamCase] = [
    // The standard's examples.
    .init("stock example: data lines join with LF", "data: YHOO\ndata: +2\ndata: 10\n\n", [message("YHOO\n+2\n10")]),
    .init(
        "ids example: an id carries over, an id without a value resets it",
        ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n",
        [message("first event", id: "1"), message("second event"), message(" third event")]),
    .init(
        "ids example without its last blank line: the last event is dropped",
        ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n",
        [message("first event", id: "1"), message("second event")]),
    .init(
        "data without a value: empty data, and a single LF", "data\n\ndata\ndata\n\ndata:",
        [message(""), message("\n")]),
    .init("one space after the colon is dropped", "data:test\n\ndata: test\n\n", [message("test"), message("test")]),
    // Decoding and the byte order mark.
    .init("a leading BOM is skipped", [0xEF, 0xBB, 0xBF] + "data: a\n\n".bytes, [message("a")]),
    .init(
        "only one BOM is skipped: a second one starts the field name",
        [0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF] + "data: a\n\ndata: b\n\n".bytes, [message("b")]),
    .init("a BOM after the start is text", "data: a\n\n\u{FEFF}data: b\n\n", [message("a")]),
    .init("a truncated BOM is part of the first line", [0xEF, 0xBB] + "\ndata: x\n\n".bytes, [message("x")]),
    .init("a truncated BOM in the first field's name", [0xEF, 0xBB] + "data: x\n\n".bytes, []),
    .init("UTF-8 text", "data: día €5 🚀\n\n", [message("día €5 🚀")]),
    .init("an invalid byte becomes U+FFFD", "data: a".bytes + [0xFF] + "b\n\n".bytes, [message("a\u{FFFD}b")]),
    .init(
        "a sequence cut by a line end becomes U+FFFD on each side",
        "data: ".bytes + [0xE2, 0x82] + "\ndata: ".bytes + [0xAC] + "\n\n".bytes, [message("\u{FFFD}\n\u{FFFD}")]),
    // Line ends.
    .init("CRLF line ends", "data: a\r\ndata: b\r\n\r\n", [message("a\nb")]),
    .init("CR line ends", "data: a\rdata: b\r\r", [message("a\nb")]),
    .init("mixed line ends", "data: a\r\n\rdata: b\n\r\n", [message("a"), message("b")]),
    .init("CR, then CRLF: two line ends", "data: a\r\r\n", [message("a")]),
    .init("LF, then CR: two line ends", "data: a\n\r", [message("a")]),
    .init("CRLF, then CR: two line ends", "data: a\r\n\rdata: b\r\n", [message("a")]),
    .init("blank lines alone dispatch nothing", "\n\r\n\r\n\n", []),
    // Comments and fields.
    .init("comments are ignored", ": hello\ndata: a\n:\n: more\n\n:\n\n", [message("a")]),
    .init("a colon in the value stays", "data: a:b\ndata::\n\n", [message("a:b\n:")]),
    .init("only one space is dropped, a tab stays", "data:  two\ndata:\ttab\n\n", [message(" two\n\ttab")]),
    .init("field names are case-sensitive and exact", "DATA: a\ndata : b\nData: c\n data: d\n\n", []),
    .init("unknown fields are ignored", "foo: bar\ndata: a\nbaz\n\n", [message("a")]),
    .init("an empty line before any field", "\ndata: a\n\n", [message("a")]),
    // event
    .init(
        "event sets the type of one event", "event: add\ndata: 1\n\ndata: 2\n\n",
        [message("1", type: "add"), message("2")]),
    .init("an empty event type is message", "event\ndata: 1\n\nevent:\ndata: 2\n\n", [message("1"), message("2")]),
    .init("a block without data forgets its type", "event: add\n\ndata: 2\n\n", [message("2")]),
    .init("the last event field wins", "event: a\nevent: b\ndata: 1\n\n", [message("1", type: "b")]),
    // id
    .init(
        "an id carries over to later events", "id: 1\ndata: a\n\ndata: b\n\n",
        [message("a", id: "1"), message("b", id: "1")], lastEventID: "1"),
    .init(
        "an empty id resets it", "id: 1\ndata: a\n\nid:\ndata: b\n\n", [message("a", id: "1"), message("b")]),
    .init(
        "an id containing NUL is ignored", "id: 1\ndata: a\n\nid: 2\u{0}3\ndata: b\n\n",
        [message("a", id: "1"), message("b", id: "1")], lastEventID: "1"),
    .init("an id alone sets the last event ID", "id: 5\n\ndata: x\n\n", [message("x", id: "5")], lastEventID: "5"),
    .init(
        "the id of an unfinished event is not committed", "id: 1\ndata: a\n\nid: 9\ndata: b",
        [message("a", id: "1")], lastEventID: "1"),
    .init("an id applies to its own block", "data: a\nid: 7\n\n", [message("a", id: "7")], lastEventID: "7"),
    // retry
    .init(
        "retry of ASCII digits sets the reconnection time", "retry: 1500\ndata: a\n\n",
        [message("a", retry: .milliseconds(1500))], reconnectionTime: .milliseconds(1500)),
    .init(
        "retry without digits is ignored", "retry: 1.5\n\nretry: 15s\n\nretry: -1\n\nretry:  1\n\nretry\n\nretry:\n\n",
        []),
    .init("retry out of Int64's range is ignored", "retry: 99999999999999999999\n\n", []),
    .init(
        "a retry alone changes the time, not the next event", "retry: 10\n\ndata: a\n\nretry: x\n\n", [message("a")],
        reconnectionTime: .milliseconds(10)),
    .init(
        "retry of an unfinished event still counts", "data: a\n\nretry: 0\ndata: b", [message("a")],
        reconnectionTime: .zero),
    // The end of the stream.
    .init("an unfinished event is dropped", "data: a\n\ndata: b\n", [message("a")]),
    .init("an unfinished line is dropped", "data: a", []),
    .init("an empty stream", "", []),
]

@Suite("EventStreamParser", .timeLimit(.minutes(1)))
struct EventStreamParserTests {
    /// Parses `chunks` as one stream and ends it.
    static func parse(_ chunks: [[UInt8]], limits: StreamLimits = .standard) throws -> (
        events: [ServerSentEvent], parser: EventStreamParser
    ) {
        var parser = EventStreamParser(limits: limits)
        var events: [ServerSentEvent] = []
        for chunk in chunks { try parser.parse(chunk) { events.append($0) } }
        parser.finish()
        return (events, parser)
    }

    @Test("in one piece", arguments: eventStreamCases)
    func wholeStream(_ spec: EventStreamCase) throws {
        let (events, parser) = try Self.parse([spec.bytes])
        #expect(events == spec.events)
        #expect(parser.lastEventID == spec.lastEventID)
        #expect(parser.reconnectionTime == spec.reconnectionTime)
    }

    @Test("cut at every byte boundary", arguments: eventStreamCases)
    func everySplit(_ spec: EventStreamCase) throws {
        for chunks in Chunking.everySplit(spec.bytes) {
            let (events, parser) = try Self.parse(chunks)
            #expect(events == spec.events, "cut after byte \(chunks[0].count)")
            #expect(parser.lastEventID == spec.lastEventID, "cut after byte \(chunks[0].count)")
            #expect(parser.reconnectionTime == spec.reconnectionTime, "cut after byte \(chunks[0].count)")
        }
    }

    @Test("cut in three at every pair of byte boundaries", arguments: eventStreamCases)
    func everyThreeWaySplit(_ spec: EventStreamCase) throws {
        for chunks in Chunking.everyThreeWaySplit(spec.bytes) {
            let (events, parser) = try Self.parse(chunks)
            #expect(events == spec.events, "cut after bytes \(chunks[0].count), \(chunks[0].count + chunks[1].count)")
            #expect(parser.lastEventID == spec.lastEventID)
        }
    }

    @Test("byte by byte", arguments: eventStreamCases)
    func byteByByte(_ spec: EventStreamCase) throws {
        let (events, parser) = try Self.parse(Chunking.byteByByte(spec.bytes))
        #expect(events == spec.events)
        #expect(parser.lastEventID == spec.lastEventID)
        #expect(parser.reconnectionTime == spec.reconnectionTime)
    }

    @Test("a CRLF split across two chunks is one line end")
    func crlfAcrossChunks() throws {
        // Two line ends would make an empty line: "a" would be dispatched alone, and "b" after it.
        let (events, _) = try Self.parse(["data: a\r".bytes, "\ndata: b\r".bytes, "\n\r".bytes, "\n".bytes])
        #expect(events == [message("a\nb")])
    }

    @Test("a CR at the end of a chunk, then an empty chunk, then an LF, is one line end")
    func crlfAcrossAnEmptyChunk() throws {
        let (events, _) = try Self.parse(["data: a\r".bytes, [], "\ndata: b\n\n".bytes])
        #expect(events == [message("a\nb")])
    }

    @Test("events are emitted as soon as their blank line arrives")
    func promptDispatch() throws {
        var parser = EventStreamParser()
        #expect(try parser.parse("data: a\n".bytes).isEmpty)
        #expect(try parser.parse("\n".bytes) == [message("a")])
        #expect(try parser.parse("data: b\r".bytes).isEmpty)
        #expect(try parser.parse("\r".bytes) == [message("b")])
    }

    @Test("any byte collection works: ArraySlice, a non-contiguous collection, a String's UTF-8 view")
    func collections() throws {
        let text = "id: 1\ndata: a\n\n"
        var sliceParser = EventStreamParser()
        #expect(try sliceParser.parse(text.bytes[...]) == [message("a", id: "1")])
        var lazyParser = EventStreamParser()
        #expect(try lazyParser.parse(text.utf8.lazy.map { $0 }) == [message("a", id: "1")])
        var viewParser = EventStreamParser()
        #expect(try viewParser.parse(text.utf8) == [message("a", id: "1")])
    }
}
