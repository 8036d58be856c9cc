extension MessageBody {
    /// This body, calling `report` with the running byte count after each chunk goes by.
    ///
    /// A body held in memory is handed out in chunks of `chunkSize` so progress moves while it is written.
    ///
    /// The observed body is a stream to a transport that knows nothing of it: no ``bufferedBytes``, no `fileURL`.
    /// A transport that sends bodies from memory or from a file itself, and counts the bytes it sent, sends the
    /// ``unobserved`` body the same way as without progress (its framing and `Content-Length` unchanged) and reports
    /// its count to ``progressReport``.
    func observing(chunkSize: Int = 64 * 1024, _ report: @escaping @Sendable (Int64) -> Void) -> MessageBody {
        MessageBody(observed: self, chunkSize: chunkSize, report: report)
    }

    /// Where an observed body (``observing(chunkSize:_:)``) reports its running byte count; `nil` for another.
    package var progressReport: (@Sendable (Int64) -> Void)? {
        if case .observed(_, _, let report) = storage { return report }
        return nil
    }

    /// The body an observed body observes, or this body.
    package var unobserved: MessageBody {
        if case .observed(let base, _, _) = storage { return base }
        return self
    }
}

/// The chunks of a body's iterator, at most `chunkSize` bytes each, with the running count reported as they pass.
struct ObservedChunks: AsyncIteratorProtocol {
    var base: MessageBody.AsyncIterator
    var pending: ArraySlice<UInt8> = []
    let chunkSize: Int
    let report: @Sendable (Int64) -> Void
    var count: Int64 = 0
    /// Whether a count was reported: an empty body reports its 0 once, at its end.
    var reported = false

    mutating func next() async throws -> ArraySlice<UInt8>? {
        if pending.isEmpty {
            guard let chunk = try await base.next() else {
                if !reported {
                    // An empty body (a 204, an empty upload) went by too: without this, its progress never came.
                    reported = true
                    report(count)
                }
                return nil
            }
            pending = chunk
        }
        let piece = pending.prefix(chunkSize)
        pending = pending.dropFirst(piece.count)
        count += Int64(piece.count)
        reported = true
        report(count)
        return piece
    }
}
