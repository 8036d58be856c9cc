import CourierCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A streamed request body written to a private temporary file, which URLSession then sends with
/// `uploadTask(with:fromFile:)`, reading it in chunks.
///
/// Where URLSession cannot take a body as it is produced (Apple platforms: an `httpBodyStream` must be a stream
/// URLSession can schedule, and a bound stream pair would block a thread on each write), the body goes through disk
/// instead of memory, so a body of any size is sent with a bounded buffer (Alamofire does the same with large
/// multipart bodies). The bytes reach the server after the body has ended, not while it is produced. The file is
/// readable by this user only and is removed when the request ends, however it ends.
struct UploadSpool: Sendable {
    /// The file, complete.
    let url: URL
    /// Its size in bytes.
    let count: Int64

    /// Writes `body` into a new file in `directory`.
    ///
    /// - Throws: `CancellationError`; `CourierError.Code.transportFailed` when reading the body fails (the body's
    ///   error underneath); `CourierError.Code.fileWriteFailed` when the file cannot be created or written (a full
    ///   disk); `CourierError.Code.invalidBody` when the body's length is known and it produced another number of
    ///   bytes. The file is removed when writing fails.
    static func write(_ body: MessageBody, in directory: URL) async throws -> UploadSpool {
        let url = directory.appendingPathComponent("courier-upload-\(UUID().uuidString)")
        // Created readable and writable by this user only, from the start (a new file: never one that exists).
        let descriptor = open(url.path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CourierError(
                code: .fileWriteFailed,
                stage: .transport,
                message: "cannot create a temporary file for the streamed request body in \(directory.path) "
                    + "(errno \(errno))"
            )
        }
        do {
            let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
            defer { try? handle.close() }
            var count: Int64 = 0
            var chunks = body.makeAsyncIterator()
            // Written in batches of about 1 MiB, each off the cooperative thread pool (a disk write blocks its thread,
            // and that pool has one thread per CPU), one batch at a time: at most about 2 MiB of the body in memory.
            var batch: [ArraySlice<UInt8>] = []
            var batched = 0
            while let chunk = try await nextChunk(&chunks) {
                try Task.checkCancellation()
                batch.append(chunk)
                batched += chunk.count
                count += Int64(chunk.count)
                if batched >= Self.batchSize {
                    try await write(batch, to: handle, url: url)
                    batch.removeAll(keepingCapacity: true)
                    batched = 0
                }
            }
            if !batch.isEmpty {
                try await write(batch, to: handle, url: url)
            }
            if case .known(let expected) = body.length, expected != count {
                throw lengthMismatch(produced: "\(count)", declared: expected)
            }
            return UploadSpool(url: url, count: count)
        } catch {
            try? FileManager.default.removeItem(at: url)
            throw error
        }
    }

    /// How many bytes of the body are written to the file at once.
    static let batchSize = 1024 * 1024

    /// Appends `chunks` to the file on a dispatch queue and waits for it.
    private static func write(_ chunks: [ArraySlice<UInt8>], to handle: FileHandle, url: URL) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global(qos: .utility).async {
                do {
                    for chunk in chunks {
                        try chunk.withUnsafeBytes { try handle.write(contentsOf: $0) }
                    }
                    continuation.resume()
                } catch {
                    continuation.resume(
                        throwing: CourierError(
                            code: .fileWriteFailed,
                            stage: .transport,
                            message: "writing the streamed request body to a temporary file failed (\(url.path))",
                            underlyingError: error
                        ))
                }
            }
        }
    }

    /// The body's next chunk; its failure as ``URLSessionTransport/requestBodyError(_:)`` makes it.
    private static func nextChunk(_ chunks: inout MessageBody.AsyncIterator) async throws -> ArraySlice<UInt8>? {
        do {
            return try await chunks.next()
        } catch {
            throw URLSessionTransport.requestBodyError(error)
        }
    }

    /// Removes the file (a request that failed before URLSession opened it, or one that ended).
    func remove() {
        try? FileManager.default.removeItem(at: url)
    }

    /// The error of a streamed body that produced another number of bytes than its known length: the request is at
    /// fault (a file that shrank or grew, a miscounted sequence), so it is not sent, and not retried.
    static func lengthMismatch(produced: String, declared: Int64) -> CourierError {
        CourierError(
            code: .invalidBody,
            stage: .transport,
            message: "the streamed request body produced \(produced) bytes; the length it declared is \(declared)"
        )
    }
}
