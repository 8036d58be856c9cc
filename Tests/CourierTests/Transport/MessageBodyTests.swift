import Courier
import CourierCore
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("MessageBody", .timeLimit(.minutes(1)))
struct MessageBodyTests {
    private static func chunks(_ count: Int, of size: Int) -> [[UInt8]] {
        Array(repeating: Array(repeating: UInt8(ascii: "z"), count: size), count: count)
    }

    @Test("bytes in memory are replayable: every iteration yields the same bytes")
    func replayableBytes() async throws {
        let body = MessageBody(Data("hello".utf8))
        #expect(body.isReplayable)
        #expect(body.iterationBehavior == .multiple)
        #expect(body.length == .known(5))
        #expect(body.bufferedBytes == ArraySlice(Array("hello".utf8)))
        #expect(try await DecisionFixtures.drain(body) == Array("hello".utf8))
        #expect(try await DecisionFixtures.drain(body) == Array("hello".utf8))
        #expect(try await body.collect(upTo: 5) == Data("hello".utf8))
        #expect(try await body.collect(upTo: 5) == Data("hello".utf8))
    }

    @Test("a body made from Data shares its bytes: collecting it gives the same storage back, not a copy")
    func dataIsShared() async throws {
        let data = Data(repeating: 0x61, count: 1 << 20)
        let collected = try await MessageBody(data).collect(upTo: .max)
        #expect(collected == data)
        let original = data.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        let shared = collected.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        #expect(original == shared)
        #expect(MessageBody(data).bufferedBytes?.count == 1 << 20)
    }

    @Test("an empty body yields no chunks and has length 0")
    func emptyBody() async throws {
        let body = MessageBody([UInt8]())
        #expect(body.length == .known(0))
        var iterator = body.makeAsyncIterator()
        #expect(try await iterator.next() == nil)
        #expect(try await body.collect(upTo: 0) == Data())
    }

    @Test("a one-shot stream yields its bytes once; a second iteration throws bodyNotReplayable")
    func oneShotStream() async throws {
        let body = DecisionFixtures.oneShotBody("stream")
        #expect(!body.isReplayable)
        #expect(body.bufferedBytes == nil)
        #expect(try await DecisionFixtures.drain(body) == Array("stream".utf8))
        let error = try #require(await expectCourierError { try await DecisionFixtures.drain(body) })
        #expect(error.code == .bodyNotReplayable)
        let again = try #require(await expectCourierError { try await body.collect(upTo: 100) })
        #expect(again.code == .bodyNotReplayable)
    }

    @Test("a copy of a one-shot body shares its single use")
    func copiesShareConsumption() async throws {
        let body = DecisionFixtures.oneShotBody("once")
        let copy = body
        #expect(try await DecisionFixtures.drain(copy) == Array("once".utf8))
        let error = try #require(await expectCourierError { try await DecisionFixtures.drain(body) })
        #expect(error.code == .bodyNotReplayable)
    }

    @Test("a sequence declared .multiple can be iterated again")
    func multipleSequence() async throws {
        let pulled = DecisionFixtures.Counter()
        let body = MessageBody(
            DecisionFixtures.CountingChunks(chunks: [[1, 2], [3]], pulled: pulled),
            length: .known(3),
            iterationBehavior: .multiple
        )
        #expect(body.isReplayable)
        #expect(try await DecisionFixtures.drain(body) == [1, 2, 3])
        #expect(try await DecisionFixtures.drain(body) == [1, 2, 3])
        #expect(pulled.count == 4)
    }

    @Test("collect(upTo:) reads a body of exactly the limit")
    func collectAtLimit() async throws {
        let pulled = DecisionFixtures.Counter()
        let body = MessageBody(
            DecisionFixtures.CountingChunks(chunks: Self.chunks(4, of: 8), pulled: pulled),
            length: .unknown,
            iterationBehavior: .single
        )
        #expect(try await body.collect(upTo: 32) == Data(repeating: UInt8(ascii: "z"), count: 32))
    }

    @Test("collect(upTo:) refuses a body announcing more than the limit before reading any of it")
    func collectRefusesAnnouncedLength() async throws {
        let pulled = DecisionFixtures.Counter()
        let body = MessageBody(
            DecisionFixtures.CountingChunks(chunks: Self.chunks(4, of: 8), pulled: pulled),
            length: .known(32),
            iterationBehavior: .single
        )
        let error = try #require(await expectCourierError { try await body.collect(upTo: 31) })
        #expect(error.code == .bodyTooLarge)
        #expect(error.message == "the body announces 32 bytes; at most 31 bytes are read into memory")
        #expect(pulled.count == 0)
    }

    @Test("collect(upTo:) stops a body of unknown length as soon as it passes the limit")
    func collectStopsGrowingBody() async throws {
        let pulled = DecisionFixtures.Counter()
        let body = MessageBody(
            DecisionFixtures.CountingChunks(chunks: Self.chunks(1000, of: 8), pulled: pulled),
            length: .unknown,
            iterationBehavior: .single
        )
        let error = try #require(await expectCourierError { try await body.collect(upTo: 20) })
        #expect(error.code == .bodyTooLarge)
        #expect(error.message == "the body grew past the limit; at most 20 bytes are read into memory")
        #expect(pulled.count == 3)
    }

    @Test("collect(upTo:) catches a body that sends more than it announced")
    func collectCatchesUnderAnnouncedBody() async throws {
        let pulled = DecisionFixtures.Counter()
        let body = MessageBody(
            DecisionFixtures.CountingChunks(chunks: Self.chunks(10, of: 8), pulled: pulled),
            length: .known(8),
            iterationBehavior: .single
        )
        let error = try #require(await expectCourierError { try await body.collect(upTo: 16) })
        #expect(error.code == .bodyTooLarge)
    }

    @Test("collect(upTo:) refuses bytes in memory over the limit", arguments: [0, 4])
    func collectBufferedOverLimit(limit: Int) async throws {
        let error = try #require(
            await expectCourierError { try await MessageBody(Data("hello".utf8)).collect(upTo: limit) })
        #expect(error.code == .bodyTooLarge)
    }

    @Test("an error from the underlying sequence comes through collect")
    func collectPassesErrors() async throws {
        let stream = AsyncThrowingStream<ArraySlice<UInt8>, any Error> { continuation in
            continuation.yield([1, 2])
            continuation.finish(throwing: DecisionFixtures.Failure(reason: "reset"))
        }
        let body = MessageBody(stream, length: .unknown, iterationBehavior: .single)
        await #expect(throws: DecisionFixtures.Failure(reason: "reset")) { try await body.collect(upTo: 100) }
    }

    /// A transport body that counts how it is read: chunk by chunk, and whole.
    private struct CountingCollectable: CollectableBytes {
        typealias Element = ArraySlice<UInt8>
        let bytes: [UInt8]
        let chunkedReads: DecisionFixtures.Counter
        let wholeReads: DecisionFixtures.Counter

        func makeAsyncIterator() -> AsyncThrowingStream<ArraySlice<UInt8>, any Error>.AsyncIterator {
            chunkedReads.next()
            let bytes = bytes
            return AsyncThrowingStream { continuation in
                continuation.yield(bytes[...])
                continuation.finish()
            }.makeAsyncIterator()
        }

        func collect(upTo limit: Int) async throws -> Data {
            wholeReads.next()
            guard bytes.count <= limit else { throw CourierError.bodyTooLarge(limit: limit, announced: nil) }
            return Data(bytes)
        }
    }

    @Test("a transport's collectable body is read whole in one step, once; later reads throw bodyNotReplayable")
    func collectableBody() async throws {
        let chunked = DecisionFixtures.Counter()
        let whole = DecisionFixtures.Counter()
        func makeBody(_ text: String, length: MessageBody.Length) -> MessageBody {
            MessageBody(
                collectable: CountingCollectable(bytes: Array(text.utf8), chunkedReads: chunked, wholeReads: whole),
                length: length)
        }
        let body = makeBody("whole", length: .known(5))
        #expect(!body.isReplayable)
        #expect(try await body.collect(upTo: 5) == Data("whole".utf8))
        #expect(whole.count == 1)
        #expect(chunked.count == 0)
        let again = try #require(await expectCourierError { try await body.collect(upTo: 5) })
        #expect(again.code == .bodyNotReplayable)
        await #expect(throws: CourierError.self) { try await DecisionFixtures.drain(body) }
        #expect(whole.count == 1)

        let streamed = makeBody("chunks", length: .unknown)
        #expect(try await DecisionFixtures.drain(streamed) == Array("chunks".utf8))
        #expect(chunked.count == 1)
        let announced = makeBody("chunks", length: .known(6))
        let tooLarge = try #require(await expectCourierError { try await announced.collect(upTo: 5) })
        #expect(tooLarge.code == .bodyTooLarge)
        #expect(whole.count == 1)
    }
}
