import Foundation

/// A streamed response body that the cache stores once its reader has read it to the end.
///
/// Chunks pass through as they arrive. A copy of at most `limit` bytes is kept on the side; past the limit the copy
/// is let go and the response is not stored. At the end of the body (the base sequence's `nil`), the copy is handed
/// to `store` before the reader sees the end, so a call that finished reading finds its response in the cache. A
/// body that fails, or that the reader stops reading, is never stored: its copy goes with the iterator.
struct CachingBody: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>

    private let base: MessageBody
    private let limit: Int
    private let store: @Sendable (Data) async -> Void

    private let expected: Int64?

    /// - Parameter expected: The body's announced length, reserved up front (at most `limit`) so the copy does not
    ///   grow by doubling past it.
    init(_ base: MessageBody, limit: Int, expected: Int64?, store: @escaping @Sendable (Data) async -> Void) {
        self.base = base
        self.limit = limit
        self.expected = expected
        self.store = store
    }

    func makeAsyncIterator() -> Iterator {
        var copy = Data()
        if let expected, expected > 0 { copy.reserveCapacity(Int(Swift.min(expected, Int64(limit)))) }
        return Iterator(base: base.makeAsyncIterator(), limit: limit, copy: copy, store: store)
    }

    struct Iterator: AsyncIteratorProtocol {
        private var base: MessageBody.AsyncIterator
        private let limit: Int
        private let store: @Sendable (Data) async -> Void
        /// The copy so far; `nil` once it cannot be stored (over the limit, failed, or already stored).
        private var copy: Data?

        init(
            base: MessageBody.AsyncIterator, limit: Int, copy: Data, store: @escaping @Sendable (Data) async -> Void
        ) {
            self.base = base
            self.limit = limit
            self.copy = copy
            self.store = store
        }

        mutating func next() async throws -> ArraySlice<UInt8>? {
            let chunk: ArraySlice<UInt8>?
            do {
                chunk = try await base.next()
            } catch {
                copy = nil
                throw error
            }
            guard let chunk else {
                if let body = copy {
                    copy = nil
                    await store(body)
                }
                return nil
            }
            if let kept = copy?.count {
                if kept + chunk.count > limit {
                    copy = nil
                } else {
                    copy?.append(contentsOf: chunk)
                }
            }
            return chunk
        }
    }
}
