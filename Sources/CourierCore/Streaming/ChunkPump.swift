/// A synchronous parser that turns a stream's chunks into outputs, for ``ChunkPump``.
protocol ChunkParsing {
    /// What the parser makes.
    associatedtype Output

    /// Parses the next chunk, appending what it completes to `outputs`.
    mutating func parse(_ chunk: some Collection<UInt8>, into outputs: inout [Output]) throws

    /// Ends the stream, appending what its end completes to `outputs`.
    mutating func finish(into outputs: inout [Output]) throws
}

/// Pulls chunks from a byte-chunk iterator through a ``ChunkParsing`` parser and hands out its outputs one at a
/// time: the engine of every streaming sequence.
///
/// It pulls the next chunk only when every output of the last one has been handed out, so the consumer's pace is
/// the backpressure, and what it holds is at most one chunk's outputs. When parsing fails partway through a chunk,
/// the outputs before the failure are handed out first, then the error is thrown. After an error or the end, it
/// returns `nil`. It checks for cancellation before each pull and throws `CancellationError`.
///
/// `next(isolation:)` runs on the caller's actor and pulls with the base's `next(isolation:)`, so handing out an
/// output never hops between executors; `next()` is for systems without it (before macOS 15).
struct ChunkPump<Base: AsyncIteratorProtocol, Parser: ChunkParsing> where Base.Element: Collection<UInt8> {
    private var base: Base
    private var parser: Parser
    private var pending: [Parser.Output] = []
    private var index = 0
    private var failure: (any Error)?
    private var ended = false

    init(base: Base, parser: Parser) {
        self.base = base
        self.parser = parser
    }

    /// The next output, or `nil` at the end of the stream.
    mutating func next() async throws -> Parser.Output? {
        while true {
            if let output = try take() { return output }
            if ended { return nil }
            do {
                try Task.checkCancellation()
                try feed(await base.next())
            } catch {
                fail(error)
            }
        }
    }

    /// The next output, or `nil` at the end of the stream, without leaving the caller's actor.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func next(isolation actor: isolated (any Actor)?) async throws -> Parser.Output? {
        while true {
            if let output = try take() { return output }
            if ended { return nil }
            do {
                try Task.checkCancellation()
                try feed(await base.next(isolation: actor))
            } catch {
                fail(error)
            }
        }
    }

    /// The next pending output; throws the pending failure once they are all out; `nil` when there is neither.
    private mutating func take() throws -> Parser.Output? {
        if index < pending.count {
            index += 1
            return pending[index - 1]
        }
        if let failure {
            self.failure = nil
            throw failure
        }
        pending.removeAll(keepingCapacity: true)
        index = 0
        return nil
    }

    /// Parses the next chunk, or ends the stream on `nil`.
    private mutating func feed(_ chunk: Base.Element?) throws {
        if let chunk {
            try parser.parse(chunk, into: &pending)
        } else {
            ended = true
            try parser.finish(into: &pending)
        }
    }

    private mutating func fail(_ error: any Error) {
        ended = true
        failure = error
    }
}

extension EventStreamParser: ChunkParsing {
    mutating func parse(_ chunk: some Collection<UInt8>, into outputs: inout [ServerSentEvent]) throws {
        try parse(chunk) { outputs.append($0) }
    }

    mutating func finish(into outputs: inout [ServerSentEvent]) throws {
        finish()
    }
}
