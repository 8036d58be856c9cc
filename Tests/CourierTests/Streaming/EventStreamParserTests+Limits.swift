import Courier
import Testing

/// A stream whose parsing must fail with a limit's code, after the events before the offending line.
struct EventStreamLimitCase: Sendable, CustomTestStringConvertible {
    let name: String
    let text: String
    let limits: StreamLimits
    let eventsBefore: [String]
    let code: CourierError.Code
    let limitName: String

    var testDescription: String { name }
}

let eventStreamLimitCases: [EventStreamLimitCase] = [
    .init(
        name: "a line one byte over maximumLineLength", text: "data: 1234\n\ndata: 12345\n\n",
        limits: StreamLimits(maximumLineLength: 10), eventsBefore: ["1234"], code: .lineTooLarge,
        limitName: "maximumLineLength (10 bytes)"),
    .init(
        name: "a comment over maximumLineLength", text: ": 12345678901\n\n",
        limits: StreamLimits(maximumLineLength: 10),
        eventsBefore: [], code: .lineTooLarge, limitName: "maximumLineLength (10 bytes)"),
    .init(
        name: "an unfinished line over maximumLineLength", text: "data: a\n\ndata: 12345678",
        limits: StreamLimits(maximumLineLength: 10), eventsBefore: ["a"], code: .lineTooLarge,
        limitName: "maximumLineLength (10 bytes)"),
    .init(
        name: "an event's data one byte over maximumEventSize", text: "data: 12\ndata: 12\n\ndata: 12\ndata: 123\n\n",
        limits: StreamLimits(maximumEventSize: 5), eventsBefore: ["12\n12"], code: .eventTooLarge,
        limitName: "maximumEventSize (5 bytes)"),
    .init(
        name: "empty data lines count their line feeds", text: "data\ndata\ndata\n\n",
        limits: StreamLimits(maximumEventSize: 1), eventsBefore: [], code: .eventTooLarge,
        limitName: "maximumEventSize (1 bytes)"),
]

extension EventStreamParserTests {
    /// Parses `chunks`, returning the events emitted before an error, and the error.
    static func parseUntilError(_ chunks: [[UInt8]], limits: StreamLimits) -> ([String], CourierError?) {
        var parser = EventStreamParser(limits: limits)
        var events: [String] = []
        do {
            for chunk in chunks { try parser.parse(chunk) { events.append($0.data) } }
            parser.finish()
        } catch {
            return (events, error as? CourierError)
        }
        return (events, nil)
    }

    @Test(
        "a limit fires with its code, naming the limit, after the events before it, however cut",
        arguments: eventStreamLimitCases)
    func limitFires(_ spec: EventStreamLimitCase) throws {
        let cuts = Chunking.everySplit(spec.text.bytes) + [Chunking.byteByByte(spec.text.bytes)]
        for chunks in cuts {
            let (events, error) = Self.parseUntilError(chunks, limits: spec.limits)
            #expect(events == spec.eventsBefore)
            let thrown = try #require(error)
            #expect(thrown.code == spec.code)
            #expect(thrown.stage == .parse)
            #expect(thrown.message?.contains(spec.limitName) == true, "\(thrown)")
        }
    }

    @Test("a line or an event exactly at the limit passes, and a line's CR or LF does not count")
    func exactlyAtTheLimit() throws {
        let text = "data: 1234\r\n\r\ndata: 1234\rdata: 1\n\n"  // lines of 10 bytes, data of 4 and of 6 bytes
        let limits = StreamLimits(maximumLineLength: 10, maximumEventSize: 6)
        for chunks in Chunking.everySplit(text.bytes) + [Chunking.byteByByte(text.bytes)] {
            let (events, _) = try Self.parse(chunks, limits: limits)
            #expect(events.map(\.data) == ["1234", "1234\n1"])
        }
    }

    @Test("a line still arriving is refused as soon as it is too long, before its end")
    func refusesEarly() throws {
        var parser = EventStreamParser(limits: StreamLimits(maximumLineLength: 16))
        _ = try parser.parse("data: 0123456789".bytes)  // 16 bytes: at the limit, still arriving
        let error = #expect(throws: CourierError.self) { _ = try parser.parse("x".bytes) }
        #expect(error?.code == .lineTooLarge)
        #expect(error?.message?.contains("at least 17 bytes") == true)
    }

    @Test("the error's message names the line's size")
    func messageNamesTheSize() throws {
        var parser = EventStreamParser(limits: StreamLimits(maximumLineLength: 4, maximumEventSize: 3))
        let line = #expect(throws: CourierError.self) { _ = try parser.parse("data: 12345\n".bytes) }
        #expect(line?.message == "a line of the stream has 11 bytes, more than maximumLineLength (4 bytes)")
        var eventParser = EventStreamParser(limits: StreamLimits(maximumEventSize: 3))
        let event = #expect(throws: CourierError.self) { _ = try eventParser.parse("data: 1234\n".bytes) }
        #expect(event?.message == "an event's data has at least 4 bytes, more than maximumEventSize (3 bytes)")
    }

    @Test("negative limits count as zero")
    func negativeLimits() {
        let limits = StreamLimits(maximumLineLength: -1, maximumEventSize: -5)
        #expect(limits.maximumLineLength == 0)
        #expect(limits.maximumEventSize == 0)
    }

    @Test("finish() starts the next stream: BOM again, the last event ID and retry kept, the unfinished event gone")
    func finishStartsTheNextStream() throws {
        var parser = EventStreamParser()
        _ = try parser.parse("retry: 250\nid: 1\ndata: a\n\nid: 2\nevent: x\ndata: lost".bytes)
        parser.finish()
        #expect(parser.lastEventID == "1")
        #expect(parser.reconnectionTime == .milliseconds(250))
        let events = try parser.parse([0xEF, 0xBB, 0xBF] + "data: b\n\n".bytes)
        #expect(events == [ServerSentEvent(id: "1", data: "b")])
    }

    @Test("finish() forgets a CR at the end of the last stream")
    func finishForgetsCR() throws {
        var parser = EventStreamParser()
        _ = try parser.parse("data: a\n\ndata: b\r".bytes)
        parser.finish()
        #expect(try parser.parse("\ndata: c\n\n".bytes).map(\.data) == ["c"])
    }

    @Test("a parser seeded with a last event ID gives it to events until the stream sets another")
    func seededLastEventID() throws {
        var parser = EventStreamParser(lastEventID: "41")
        #expect(parser.lastEventID == "41")
        let events = try parser.parse("data: a\n\nid: 42\ndata: b\n\n".bytes)
        #expect(events.map(\.id) == ["41", "42"])
        #expect(EventStreamParser(lastEventID: "").lastEventID == nil)
    }
}
