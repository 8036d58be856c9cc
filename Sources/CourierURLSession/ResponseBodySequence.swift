/// The chunks of a response body as URLSession delivers them, read once.
///
/// Iterating pulls chunks out of the ``ResponseTask``'s buffer, which lets the transfer continue once the buffer
/// drains. When the sequence and all its iterators are gone (the body was dropped, or iteration stopped early), the
/// transfer is cancelled; cancelling the iterating `Task` fails the read with `CancellationError` and cancels it too.
struct ResponseBodySequence: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>

    /// Cancels the transfer when the last holder of the body lets go.
    final class Lease: Sendable {
        let task: ResponseTask

        init(_ task: ResponseTask) {
            self.task = task
        }

        deinit {
            task.consumerDidLeave()
        }
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let lease: Lease

        mutating func next() async throws -> ArraySlice<UInt8>? {
            try await lease.task.nextChunk()
        }
    }

    let lease: Lease

    init(_ task: ResponseTask) {
        self.lease = Lease(task)
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(lease: lease)
    }
}
