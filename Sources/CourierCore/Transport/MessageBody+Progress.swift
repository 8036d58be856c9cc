extension MessageBody {
    /// This body, calling `report` with the running byte count after each chunk goes by.
    ///
    /// A body held in memory is handed out in chunks of `chunkSize` so progress moves while it is written.
    func observing(chunkSize: Int = 64 * 1024, _ report: @escaping @Sendable (Int64) -> Void) -> MessageBody {
        MessageBody(
            ObservedChunks(base: self, chunkSize: chunkSize, report: report),
            length: length,
            iterationBehavior: iterationBehavior
        )
    }
}

/// Chunks of a body with a running count reported as they pass.
struct ObservedChunks: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    let base: MessageBody
    let chunkSize: Int
    let report: @Sendable (Int64) -> Void

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: MessageBody.AsyncIterator
        var pending: ArraySlice<UInt8> = []
        let chunkSize: Int
        let report: @Sendable (Int64) -> Void
        var count: Int64 = 0

        mutating func next() async throws -> ArraySlice<UInt8>? {
            if pending.isEmpty {
                guard let chunk = try await base.next() else { return nil }
                pending = chunk
            }
            let piece = pending.prefix(chunkSize)
            pending = pending.dropFirst(piece.count)
            count += Int64(piece.count)
            report(count)
            return piece
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), chunkSize: chunkSize, report: report)
    }
}
