public import Foundation

extension MessageBody {
    /// A body read from a file in chunks, never whole into memory; replayable when the file is a regular one.
    ///
    /// The length is the file's size when the body is created; each iteration opens the file again. A file that is
    /// not a regular one (a named pipe, `/dev/stdin`) goes chunked and is a one-shot body, as curl cannot rewind
    /// such an input either: read a second time it would give nothing or block, so a retry or a 307/308 redirect
    /// that would send it again is not made (the response or error comes back as it is), and a custom decision that
    /// restarts the call fails it with ``CourierError/Code/bodyNotReplayable``.
    ///
    /// - Throws: ``CourierError/Code/invalidBody`` when the file cannot be read, or `url` is not a file URL.
    public static func file(at url: URL, chunkSize: Int = 64 * 1024) throws -> MessageBody {
        let size = try uploadableFileSize(at: url) { reason, error in
            CourierError(
                code: .invalidBody,
                stage: .adapt,
                message: "cannot read the file to upload at \(url.path): \(reason)",
                underlyingError: error
            )
        }
        return MessageBody(
            file: url, chunkSize: Swift.max(1, chunkSize), length: size.map { .known($0) } ?? .unknown,
            iterationBehavior: size == nil ? .single : .multiple)
    }

    /// The size of the file at `url` (following links), once it is known to be uploadable: it is a file URL, exists,
    /// is not a directory and is readable; `nil` for a file that is not a regular one (a named pipe), which can be
    /// read once only. Checked when the request is adapted, not at the first read inside the transport:
    /// a directory stats fine (with a size), and an unreadable file too, and either then failed after the head went
    /// out, as a network error.
    ///
    /// - Parameter failure: The error for a `reason` the file cannot be uploaded, and the error underneath.
    package static func uploadableFileSize(
        at url: URL, failure: (_ reason: String, _ error: (any Error)?) -> CourierError
    ) throws -> Int64? {
        guard url.isFileURL else {
            // `https://cdn.example/x.png` read as a path is `/x.png`: a misleading "no such file", or a local file.
            throw failure(
                "it is not a file URL (\(url.scheme ?? "no scheme"):); download it first, or send its bytes", nil)
        }
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfFile(at: url)
        } catch {
            throw failure("no such file or no access", error)
        }
        if let type = attributes[.type] as? FileAttributeType, type == .typeDirectory {
            throw failure("it is a directory", nil)
        }
        guard FileManager.default.isReadableFile(atPath: url.path) else { throw failure("permission denied", nil) }
        // A named pipe, a socket or a device has no size to announce (a pipe's is 0 whatever is written to it): its
        // bytes go chunked.
        guard (attributes[.type] as? FileAttributeType).map({ $0 == .typeRegular }) ?? true else { return nil }
        return (attributes[.size] as? NSNumber)?.int64Value
    }
}

extension FileManager {
    /// The attributes of the file `url` names, following symbolic links: `attributesOfItem` does not, and a link's
    /// own size is the length of the path it holds (a Kubernetes secret mount's files are links). Every upload that
    /// announces a file's length asks here.
    package func attributesOfFile(at url: URL) throws -> [FileAttributeKey: Any] {
        try attributesOfItem(atPath: url.resolvingSymlinksInPath().path)
    }
}

/// The chunks of a file, read on demand.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    let url: URL
    let chunkSize: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        let url: URL
        let chunkSize: Int
        var handle: FileHandle?
        var finished = false

        mutating func next() async throws -> ArraySlice<UInt8>? {
            guard !finished else { return nil }
            try Task.checkCancellation()
            if handle == nil {
                handle = try FileHandle(forReadingFrom: url)
            }
            guard let data = try handle?.read(upToCount: chunkSize), !data.isEmpty else {
                finished = true
                try handle?.close()
                handle = nil
                return nil
            }
            return ArraySlice(data)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(url: url, chunkSize: chunkSize) }
}

extension RequestBody {
    /// A file streamed from disk: replayable, with its exact length, for a regular file; chunked and one-shot for a
    /// named pipe or `/dev/stdin` (see ``MessageBody/file(at:chunkSize:)``).
    ///
    /// The file is opened when the request is adapted: a missing or unreadable file, or a URL that is not a file
    /// URL, fails the call with ``CourierError/Code/invalidBody`` (stage `.adapt`) before anything is sent.
    public static func file(_ url: URL, contentType: String? = "application/octet-stream") -> RequestBody {
        RequestBody(kind: .deferred { .stream(try MessageBody.file(at: url), contentType: contentType) })
    }
}
