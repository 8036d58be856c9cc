import Courier
import Foundation
import Testing

private struct Tick: Decodable, Sendable, Equatable {
    var n: Int
}

@Suite("ServerSentEvents", .timeLimit(.minutes(1)))
struct ServerSentEventsTests {
    static func collect<Events: AsyncSequence>(_ events: Events) async throws -> [Events.Element] {
        var collected: [Events.Element] = []
        for try await event in events { collected.append(event) }
        return collected
    }

    @Test("the sequence gives the parser's events, cut at every byte boundary", arguments: eventStreamCases)
    func sameAsTheParser(_ spec: EventStreamCase) async throws {
        for chunks in Chunking.everySplit(spec.bytes) + [Chunking.byteByByte(spec.bytes)] {
            #expect(try await Self.collect(ChunkSequence(chunks: chunks).serverSentEvents()) == spec.events)
        }
    }

    @Test("chunks of [UInt8], ArraySlice<UInt8> and Data give the same events")
    func chunkTypes() async throws {
        let text = "id: 1\ndata: a\r\n\r\ndata: b\n\n"
        let expected = [ServerSentEvent(id: "1", data: "a"), ServerSentEvent(id: "1", data: "b")]
        let arrays = Chunking.byteByByte(text.bytes)
        #expect(try await Self.collect(ChunkSequence(chunks: arrays).serverSentEvents()) == expected)
        #expect(try await Self.collect(ChunkSequence(chunks: arrays.map { $0[...] }).serverSentEvents()) == expected)
        #expect(try await Self.collect(ChunkSequence(chunks: arrays.map { Data($0) }).serverSentEvents()) == expected)
    }

    @Test("an event is handed out as soon as its chunk arrives, before the stream goes on")
    func promptDelivery() async throws {
        let (body, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        var events = body.serverSentEvents().makeAsyncIterator()
        continuation.yield("data: first\n\ndata: sec".bytes)
        #expect(try await events.next()?.data == "first")
        continuation.yield("ond\n\n".bytes)
        #expect(try await events.next()?.data == "second")
        continuation.finish()
        #expect(try await events.next() == nil)
    }

    @Test("the next chunk is pulled only once the last one's events are consumed")
    func backpressure() async throws {
        let pulls = PullCounter()
        let chunks = ["data: 1\n\ndata: 2\n\n", "data: 3\n\n", "data: 4\n\n"].map(\.bytes)
        var events = ChunkSequence(chunks: chunks, pulls: pulls).serverSentEvents().makeAsyncIterator()
        #expect(pulls.value == 0)
        _ = try await events.next()
        #expect(pulls.value == 1)
        _ = try await events.next()
        #expect(pulls.value == 1)
        _ = try await events.next()
        #expect(pulls.value == 2)
    }

    @Test("a limit fires after the events before it; then the sequence ends")
    func limitAfterEarlierEvents() async throws {
        let chunks = ["data: ok\n\ndata: 0123456789\n\n".bytes, "data: never\n\n".bytes]
        var events = ChunkSequence(chunks: chunks).serverSentEvents(limits: StreamLimits(maximumLineLength: 12))
            .makeAsyncIterator()
        #expect(try await events.next()?.data == "ok")
        let error = await #expect(throws: CourierError.self) { _ = try await events.next() }
        #expect(error?.code == .lineTooLarge)
        #expect(try await events.next() == nil)
    }

    @Test("the body's error comes through after the events before it")
    func baseError() async throws {
        let failure = CourierError(code: .truncatedResponse, stage: .transport)
        var events = ChunkSequence(chunks: ["data: a\n\n".bytes], failure: failure).serverSentEvents()
            .makeAsyncIterator()
        #expect(try await events.next()?.data == "a")
        let error = await #expect(throws: CourierError.self) { _ = try await events.next() }
        #expect(error?.code == .truncatedResponse)
        #expect(try await events.next() == nil)
    }

    @Test("a cancelled task pulls nothing and throws CancellationError")
    func cancelledBeforePulling() async throws {
        let pulls = PullCounter()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            var events = ChunkSequence(chunks: ["data: a\n\n".bytes], pulls: pulls).serverSentEvents()
                .makeAsyncIterator()
            _ = try await events.next()
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(pulls.value == 0)
    }

    @Test("cancelling the consuming task ends a stream that never ends (by its end or CancellationError)")
    func cancellationEndsIteration() async throws {
        let (body, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        continuation.yield("data: a\n\n".bytes)
        let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
        let task = Task {
            var count = 0
            do {
                for try await _ in body.serverSentEvents() {
                    count += 1
                    startedContinuation.yield()
                }
            } catch is CancellationError {
                // Cancelled before the pull rather than during it: the other way to end.
            }
            return count
        }
        for await _ in started { break }
        task.cancel()
        #expect(try await task.value == 1)
        continuation.finish()
    }

    @Test("typed events decode their data and keep the id, type and retry")
    func typedEvents() async throws {
        let text =
            "retry: 5\nid: 1\nevent: tick\ndata: {\"n\":1}\n\ndata: {\"n\":\n"
            + "data: 2}\n\n"
        let events = try await Self.collect(
            ChunkSequence(chunks: Chunking.byteByByte(text.bytes)).serverSentEvents(of: Tick.self))
        #expect(
            events == [
                TypedServerSentEvent(id: "1", type: "tick", data: Tick(n: 1), retry: .milliseconds(5)),
                TypedServerSentEvent(id: "1", data: Tick(n: 2)),
            ])
    }

    @Test("a terminator event ends the typed sequence without being decoded")
    func terminator() async throws {
        let text = "data: {\"n\":1}\n\ndata: [DONE]\n\ndata: {\"n\":2}\n\n"
        let events = try await Self.collect(
            ChunkSequence(chunks: [text.bytes]).serverSentEvents(of: Tick.self, terminator: "[DONE]"))
        #expect(events.map(\.data) == [Tick(n: 1)])
    }

    @Test("an event that does not decode fails with decodingFailed naming its index, type and id, not its data")
    func decodingFailure() async throws {
        let secret = "sk-live-" + String(repeating: "x", count: 40)
        let text = "data: {\"n\":1}\n\n: ping\n\nid: 7\nevent: tick\ndata: {\"n\":\"\(secret)\"}\n\n"
        var events = ChunkSequence(chunks: [text.bytes]).serverSentEvents(of: Tick.self).makeAsyncIterator()
        #expect(try await events.next()?.data == Tick(n: 1))
        let error = try #require(await #expect(throws: CourierError.self) { _ = try await events.next() })
        #expect(error.code == .decodingFailed)
        #expect(error.stage == .parse)
        let message = try #require(error.message)
        #expect(message.contains("index 1"), "\(message)")
        #expect(message.contains("type \"tick\""), "\(message)")
        #expect(message.contains("id \"7\""), "\(message)")
        #expect(message.contains("56 bytes of data"), "\(message)")
        #expect(message.contains("at n"), "\(message)")
        #expect(!message.contains(secret))
        #expect(!"\(error)".contains(secret))
        #expect(error.underlyingError is DecodingError)
        #expect(try await events.next() == nil)
    }

    @Test("a long type or id is shortened in the decoding error")
    func longTypeShortened() async throws {
        let type = String(repeating: "t", count: 500)
        let text = "event: \(type)\ndata: nope\n\n"
        var events = ChunkSequence(chunks: [text.bytes]).serverSentEvents(of: Tick.self).makeAsyncIterator()
        let error = await #expect(throws: CourierError.self) { _ = try await events.next() }
        #expect(error?.message?.contains(String(repeating: "t", count: 64) + "…") == true)
        #expect(error?.message?.contains(type) == false)
    }
}
