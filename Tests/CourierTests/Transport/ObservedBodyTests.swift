import CourierTesting
import Foundation
import Testing

@testable import CourierCore

@Suite("MessageBody: observed for progress", .timeLimit(.minutes(1)))
struct ObservedBodyTests {
    @Test("an observed one-shot body is read once: a second iterator does not read it, as without the observer")
    func secondIteratorDoesNotRead() async throws {
        let base = MessageBody(
            ChunkSequence<ArraySlice<UInt8>>(chunks: [[1, 2], [3]]), length: .known(3), iterationBehavior: .single)
        let counts = DecisionFixtures.Journal()
        let observed = base.observing { counts.record("\($0)") }
        let first = observed.makeIterator()
        let second = observed.makeIterator()
        #expect(first.readsBody)
        #expect(!second.readsBody)
        var iterator = first.iterator
        var bytes: [UInt8] = []
        while let chunk = try await iterator.next() { bytes += chunk }
        #expect(bytes == [1, 2, 3])
        #expect(counts.entries == ["2", "3"])
    }

    @Test("an observed body keeps what a transport sends without iterating: its bytes in memory, or its file")
    func fastPathsKept() throws {
        let reported = DecisionFixtures.Journal()
        let memory = MessageBody([UInt8]("hello".utf8)).observing { reported.record("\($0)") }
        #expect(memory.bufferedBytes == nil)
        #expect(memory.unobserved.bufferedBytes.map { Array($0) } == Array("hello".utf8))
        memory.progressReport?(5)
        #expect(reported.entries == ["5"])
        #expect(memory.length == .known(5))
        let plain = MessageBody([UInt8]("x".utf8))
        #expect(plain.progressReport == nil)
        #expect(plain.unobserved.bufferedBytes != nil)
    }
}
