import Courier
import CourierCore
import Foundation
import Testing

/// Ways to cut a stream into chunks: every way a parser must read identically.
enum Chunking {
    /// The stream in two pieces, cut at every byte boundary (the first and last cuts leave an empty piece).
    static func everySplit(_ bytes: [UInt8]) -> [[[UInt8]]] {
        (0...bytes.count).map { [Array(bytes[..<$0]), Array(bytes[$0...])] }
    }

    /// The stream in three pieces, cut at every pair of byte boundaries.
    static func everyThreeWaySplit(_ bytes: [UInt8]) -> [[[UInt8]]] {
        (0...bytes.count).flatMap { first in
            (first...bytes.count).map { second in
                [Array(bytes[..<first]), Array(bytes[first..<second]), Array(bytes[second...])]
            }
        }
    }

    /// The stream one byte at a time.
    static func byteByByte(_ bytes: [UInt8]) -> [[UInt8]] {
        bytes.map { [$0] }
    }
}

/// A body in memory as an async sequence of chunks, optionally failing after them; counts how often it is pulled.
struct ChunkSequence<Chunk: Sendable>: AsyncSequence, Sendable {
    let chunks: [Chunk]
    var failure: CourierError? = nil
    var pulls: PullCounter? = nil

    func makeAsyncIterator() -> Iterator { Iterator(chunks: chunks, failure: failure, pulls: pulls) }

    struct Iterator: AsyncIteratorProtocol {
        let chunks: [Chunk]
        let failure: CourierError?
        let pulls: PullCounter?
        var index = 0

        mutating func next() async throws -> Chunk? {
            pulls?.increment()
            guard index < chunks.count else {
                if let failure { throw failure }
                return nil
            }
            index += 1
            return chunks[index - 1]
        }
    }
}

/// How many times a ``ChunkSequence`` was pulled.
final class PullCounter: Sendable {
    private let count = LockedBox(0)

    var value: Int { count.withLock { $0 } }

    func increment() { count.withLock { $0 += 1 } }
}

extension String {
    /// The string's UTF-8 bytes.
    var bytes: [UInt8] { Array(utf8) }
}
