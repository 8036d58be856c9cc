public import Foundation

/// The bytes of an HTTP message body: buffered in memory, or streamed from an asynchronous sequence.
///
/// A body knows its length when it can (so the request carries an exact `Content-Length`) and whether it can be
/// read more than once. A replayable body can be sent again after a redirect or a retry; a one-shot body (a
/// stream) never is: Courier fails with ``CourierError/Code/bodyNotReplayable`` instead of sending a truncated
/// or empty body.
///
/// ```swift
/// let small = MessageBody(Data("hello".utf8))                    // replayable, length 5
/// let streamed = MessageBody(stream, length: .unknown)           // one-shot, chunked on the wire
/// ```
public struct MessageBody: AsyncSequence, Sendable {
    /// A chunk of the body.
    public typealias Element = ArraySlice<UInt8>
    /// Errors thrown while reading the body.
    public typealias Failure = any Error

    /// The length of a body, when it is known before the body is read.
    public enum Length: Sendable, Hashable {
        /// The body has exactly this many bytes.
        case known(Int64)
        /// The length is not known in advance (a chunked request, or a response without `Content-Length`).
        case unknown

        /// The byte count when it is known.
        public var knownCount: Int64? {
            if case .known(let count) = self { return count }
            return nil
        }
    }

    /// How many times a body can be iterated.
    public enum IterationBehavior: Sendable, Hashable {
        /// The body can be read only once (a stream).
        case single
        /// The body can be read any number of times (bytes in memory, or a sequence that can restart).
        case multiple
    }

    enum Storage: Sendable {
        case bytes(ArraySlice<UInt8>)
        /// Bytes in memory as the caller gave them (a `JSONEncoder`'s output, `RequestBody.bytes`): kept, not copied
        /// into an array on every attempt, so a transport that takes `Data` sends them without a copy.
        case data(Data)
        case sequence(@Sendable () -> AsyncIterator)
        /// A file read in chunks of the given size (``file(at:chunkSize:)``).
        case file(URL, chunkSize: Int)
        /// A transport's body that can also be read whole in one step (``CollectableBytes``).
        case collectable(any CollectableReference)
        /// Another body, with a running count reported as its chunks go by (``observing(chunkSize:_:)``).
        indirect case observed(MessageBody, chunkSize: Int, report: @Sendable (Int64) -> Void)
    }

    let storage: Storage
    private let consumption: LockedBox<Bool>?

    /// The length of the body, if known.
    public let length: Length

    /// Whether the body can be iterated more than once.
    public let iterationBehavior: IterationBehavior

    /// Whether the body can be sent again (after a redirect or for a retry).
    public var isReplayable: Bool { iterationBehavior == .multiple }

    /// The file a body made by ``file(at:chunkSize:)`` reads, so a transport that sends files itself (URLSession's
    /// `uploadTask(with:fromFile:)`) can send it without a copy.
    package var fileURL: URL? {
        if case .file(let url, _) = storage { return url }
        return nil
    }

    /// `base`, reporting its running byte count to `report` as chunks of at most `chunkSize` bytes go by. Read once
    /// or again as `base` is: `base` keeps track of its one read.
    init(observed base: MessageBody, chunkSize: Int, report: @escaping @Sendable (Int64) -> Void) {
        self.storage = .observed(base, chunkSize: chunkSize, report: report)
        self.length = base.length
        self.iterationBehavior = base.iterationBehavior
        self.consumption = nil
    }

    /// A body that reads the file at `url` in chunks of `chunkSize` bytes (`.single` for a file that is not a regular
    /// one, which gives its bytes once).
    init(file url: URL, chunkSize: Int, length: Length, iterationBehavior: IterationBehavior) {
        self.storage = .file(url, chunkSize: chunkSize)
        self.length = length
        self.iterationBehavior = iterationBehavior
        self.consumption = iterationBehavior == .single ? LockedBox(false) : nil
    }

    /// The body's bytes when it is held in memory, so a transport can write them without iterating. A body made
    /// from `Data` is copied into the slice here; a transport that takes `Data` reads `bufferedData` first.
    public var bufferedBytes: ArraySlice<UInt8>? {
        switch storage {
        case .bytes(let bytes): bytes
        case .data(let data): ArraySlice(data)
        default: nil
        }
    }

    /// The body's bytes when it was made from `Data`, shared, not copied.
    package var bufferedData: Data? {
        if case .data(let data) = storage { return data }
        return nil
    }

    /// The number of bytes of a body held in memory, without copying them.
    package var bufferedCount: Int? {
        switch storage {
        case .bytes(let bytes): bytes.count
        case .data(let data): data.count
        default: nil
        }
    }

    /// Creates a replayable body from bytes in memory.
    public init(_ bytes: some Collection<UInt8>) {
        // An array or a slice is kept as it is (it shares its storage, copy-on-write); anything else is copied.
        let slice: ArraySlice<UInt8>
        if let array = bytes as? [UInt8] {
            slice = array[...]
        } else if let bytes = bytes as? ArraySlice<UInt8> {
            slice = bytes
        } else {
            slice = ArraySlice(bytes)
        }
        self.storage = .bytes(slice)
        self.length = .known(Int64(slice.count))
        self.iterationBehavior = .multiple
        self.consumption = nil
    }

    /// Creates a replayable body from data in memory, which it shares (copy-on-write) rather than copies.
    public init(_ data: Data) {
        self.storage = .data(data)
        self.length = .known(Int64(data.count))
        self.iterationBehavior = .multiple
        self.consumption = nil
    }

    /// Creates a body from an asynchronous sequence of byte chunks.
    ///
    /// - Parameters:
    ///   - sequence: The chunks, in order.
    ///   - length: The total length, if known; the request then carries it as `Content-Length`, and a sequence
    ///     that yields a different number of bytes is an error on the wire.
    ///   - iterationBehavior: `.multiple` only if iterating `sequence` again yields the same bytes again.
    public init<Bytes: AsyncSequence & Sendable>(
        _ sequence: Bytes,
        length: Length,
        iterationBehavior: IterationBehavior
    ) where Bytes.Element == ArraySlice<UInt8> {
        self.storage = .sequence { AsyncIterator(sequence.makeAsyncIterator()) }
        self.length = length
        self.iterationBehavior = iterationBehavior
        self.consumption = iterationBehavior == .single ? LockedBox(false) : nil
    }

    /// Creates a one-shot body from a transport's sequence of chunks that ``collect(upTo:)`` reads whole in one
    /// step, with the sequence's own ``CollectableBytes/collect(upTo:)``, instead of chunk by chunk.
    package init(collectable sequence: some CollectableBytes, length: Length) {
        self.storage = .collectable(CollectableBox(sequence))
        self.length = length
        self.iterationBehavior = .single
        self.consumption = LockedBox(false)
    }

    /// Creates an iterator over the chunks.
    ///
    /// A one-shot body yields its chunks to the first iterator only; any later iterator throws
    /// ``CourierError/Code/bodyNotReplayable``.
    public func makeAsyncIterator() -> AsyncIterator {
        makeIterator().iterator
    }

    /// An iterator over the chunks, and whether it is one that reads the body (`false`: a later iterator of a
    /// one-shot body, which only throws ``CourierError/Code/bodyNotReplayable``).
    func makeIterator() -> (iterator: AsyncIterator, readsBody: Bool) {
        if case .observed(let base, let chunkSize, let report) = storage {
            // The observed body's read is its base's: a second iterator of a one-shot body does not read it.
            let (inner, readsBody) = base.makeIterator()
            return (AsyncIterator(ObservedChunks(base: inner, chunkSize: chunkSize, report: report)), readsBody)
        }
        guard claimFirstRead() else {
            return (AsyncIterator(failing: CourierError(code: .bodyNotReplayable, stage: .transport)), false)
        }
        return (makeReadingIterator(), true)
    }

    private func makeReadingIterator() -> AsyncIterator {
        switch storage {
        case .bytes(let bytes):
            return AsyncIterator(bytes: bytes)
        case .data(let data):
            return AsyncIterator(bytes: ArraySlice(data))
        case .sequence(let make):
            return make()
        case .file(let url, let chunkSize):
            return AsyncIterator(FileChunks(url: url, chunkSize: chunkSize).makeAsyncIterator())
        case .collectable(let box):
            return box.makeIterator()
        case .observed:
            // Not reached: `makeIterator()` hands an observed body's read to its base before it gets here.
            return makeIterator().iterator
        }
    }

    /// Whether this is the first read of a one-shot body (and marks it read); always true for a replayable one.
    private func claimFirstRead() -> Bool {
        guard let consumption else { return true }
        return consumption.withLock { consumed in
            defer { consumed = true }
            return !consumed
        }
    }

    /// Reads the whole body into memory, failing once more than `limit` bytes arrive.
    ///
    /// - Throws: ``CourierError/Code/bodyTooLarge`` when the body is (or announces to be) larger than `limit`;
    ///   any error the underlying sequence throws.
    public func collect(upTo limit: Int) async throws -> Data {
        if case .known(let count) = length, count > Int64(limit) {
            throw CourierError.bodyTooLarge(limit: limit, announced: count)
        }
        if let data = bufferedData { return data }
        if case .bytes(let bytes) = storage {
            // Not `Data(bytes)`: its generic initializer casts the slice to `any ContiguousBytes`, and a slice is
            // too large for an existential's inline buffer, so that cast costs an allocation per call.
            return bytes.withUnsafeBytes { buffer in
                guard let base = buffer.baseAddress, !buffer.isEmpty else { return Data() }
                return Data(bytes: base, count: buffer.count)
            }
        }
        if case .collectable(let box) = storage {
            // A transport's body read whole: its chunks are not copied one by one into arrays and then into `Data`,
            // and no iterator is boxed (issue #17: 5 of a call's mallocs on AsyncHTTPClient).
            guard claimFirstRead() else { throw CourierError(code: .bodyNotReplayable, stage: .transport) }
            return try await box.collect(upTo: limit)
        }
        var data = Data()
        // At most 1 MiB ahead: the announced length comes from the server (a hostile `Content-Length` of 2^63 - 1
        // under a limit of `.max` made the reservation trap), and the buffer grows as the bytes arrive.
        if case .known(let count) = length { data.reserveCapacity(Int(Swift.min(count, 1 << 20))) }
        for try await chunk in self {
            guard data.count + chunk.count <= limit else {
                throw CourierError.bodyTooLarge(limit: limit, announced: nil)
            }
            data.append(contentsOf: chunk)
        }
        return data
    }
}

/// A transport's response body: chunks for a reader that streams, and the whole body in one step for one that
/// does not (``MessageBody/collect(upTo:)``), which the transport can do with fewer copies than chunk by chunk.
package protocol CollectableBytes: AsyncSequence, Sendable where Element == ArraySlice<UInt8> {
    /// The whole body.
    ///
    /// - Throws: ``CourierError/Code/bodyTooLarge`` once more than `limit` bytes arrive; what reading throws.
    func collect(upTo limit: Int) async throws -> Data
}

/// A ``CollectableBytes`` sequence behind one reference, so that `MessageBody.Storage`'s largest payload stays as it
/// was. With the existential itself as the payload (five words) every `MessageBody`, and every request body and
/// outgoing request holding one, grew, and a call with no collectable body made one more malloc
/// (`courier-allocations`: GET → Data 12 → 12.98, GET → JSON 37 → 38).
protocol CollectableReference: AnyObject, Sendable {
    func makeIterator() -> MessageBody.AsyncIterator
    func collect(upTo limit: Int) async throws -> Data
}

/// The one allocation that holds a transport's collectable sequence: generic, so the sequence is stored as it is,
/// not boxed again in an existential.
private final class CollectableBox<Bytes: CollectableBytes>: CollectableReference {
    let sequence: Bytes

    init(_ sequence: Bytes) { self.sequence = sequence }

    func makeIterator() -> MessageBody.AsyncIterator { MessageBody.AsyncIterator(sequence.makeAsyncIterator()) }

    func collect(upTo limit: Int) async throws -> Data { try await sequence.collect(upTo: limit) }
}

extension MessageBody {
    /// Iterates the chunks of a ``MessageBody``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private enum Source {
            /// Bytes in memory, yielded once as one chunk.
            case bytes(ArraySlice<UInt8>?)
            /// Every read throws this.
            case failing(any Error)
            /// Another sequence's iterator.
            case reader(any ChunkReader)
        }

        private var source: Source

        init<Base: AsyncIteratorProtocol>(_ base: Base) where Base.Element == ArraySlice<UInt8> {
            // One allocation, the reader; a closure over the iterator made two, its context and the box of the
            // captured variable (issue #17: on every streamed body).
            self.source = .reader(IteratorReader(base))
        }

        init(bytes: ArraySlice<UInt8>) {
            self.source = .bytes(bytes.isEmpty ? nil : bytes)
        }

        init(failing error: any Error) {
            self.source = .failing(error)
        }

        /// Returns the next chunk, or `nil` at the end of the body.
        public mutating func next() async throws -> ArraySlice<UInt8>? {
            switch source {
            case .bytes(let pending):
                source = .bytes(nil)
                return pending
            case .failing(let error):
                throw error
            case .reader(let reader):
                return try await reader.next()
            }
        }
    }
}

/// A type-erased chunk iterator: a class, so that it advances in place behind the one reference an
/// ``MessageBody/AsyncIterator`` holds (its copies share it, as they shared the closure it replaces).
private protocol ChunkReader: AnyObject {
    func next() async throws -> ArraySlice<UInt8>?
}

private final class IteratorReader<Base: AsyncIteratorProtocol>: ChunkReader where Base.Element == ArraySlice<UInt8> {
    private var base: Base

    init(_ base: Base) { self.base = base }

    func next() async throws -> ArraySlice<UInt8>? { try await base.next() }
}
