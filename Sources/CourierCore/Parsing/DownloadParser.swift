public import Foundation
public import HTTPTypes

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A response parser that reads the body as it arrives instead of from memory.
///
/// Courier hands a streaming parser the live body of an accepted response without reading it into memory first,
/// so its size is not bounded by ``Client/Configuration/maxResponseBodySize``; decisions see the head and an
/// empty body. Responses that decisions accepted with a status other than 2xx arrive buffered, as a
/// ``MessageBody`` over the bytes in memory.
public protocol StreamingResponseParser<Output>: ResponseParser {
    /// Reads `body` to its end and returns the result.
    func parse(_ head: HTTPResponse, body: MessageBody, context: ParseContext) async throws -> Output
}

extension StreamingResponseParser {
    /// The parser itself.
    public var streamingParser: (any StreamingResponseParser<Output>)? { self }

    /// Parses a body already in memory by streaming it.
    public func parse(_ response: ReceivedResponse, context: ParseContext) throws -> Output {
        throw CourierError(
            code: .unsupported,
            stage: .parse,
            message: "\(Self.self) reads bodies as they arrive; Courier calls its streaming parse"
        )
    }
}

/// A file a ``DownloadParser`` wrote.
public struct DownloadedFile: Hashable, Sendable {
    /// Where the file is.
    public var url: URL
    /// How many bytes it has.
    public var byteCount: Int64
}

/// Streams the body into a file, never holding more than one chunk in memory.
///
/// The bytes go to a temporary file next to `destination`, which replaces `destination` in one atomic rename only
/// once the whole body arrived (and was flushed to disk); a failed or cancelled download leaves no partial file
/// behind. Two downloads to one destination: the one that finishes last is the file.
///
/// ```swift
/// struct GetArchive: Request {
///     typealias Response = DownloadedFile
///     var path: String { "/archive.tar" }
///     var parser: any ResponseParser<DownloadedFile> { DownloadParser(destination: archiveURL) }
/// }
/// ```
public struct DownloadParser: StreamingResponseParser {
    /// A downloaded file.
    public typealias Output = DownloadedFile

    /// Where the file goes.
    public let destination: URL

    /// Creates a download parser.
    public init(destination: URL) { self.destination = destination }

    /// Writes the body to ``destination``.
    ///
    /// - Throws: ``CourierError/Code/fileWriteFailed`` (stage `.parse`) when the file cannot be written; any
    ///   error reading the body; `CancellationError`.
    public func parse(_ head: HTTPResponse, body: MessageBody, context: ParseContext) async throws -> DownloadedFile {
        let directory = destination.deletingLastPathComponent()
        // Not named after the destination: a name of 213 to 255 bytes, which the file system takes, made a temporary
        // name past its 255-byte limit, and the download failed before its first byte.
        let temporary = directory.appendingPathComponent(".courier-\(UUID().uuidString).part")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw Self.fileError("could not create \(temporary.path)", nil)
        }
        var count: Int64 = 0
        do {
            let handle = try FileHandle(forWritingTo: temporary)
            defer { try? handle.close() }
            for try await chunk in body {
                try handle.write(contentsOf: chunk)
                count += Int64(chunk.count)
            }
            try handle.synchronize()
            // The file it replaces keeps its permissions (a 0600 file stays private), as `replaceItemAt` kept them.
            var existing = stat()
            if stat(destination.path, &existing) == 0 {
                _ = chmod(temporary.path, existing.st_mode & 0o7777)
            }
            // One atomic rename(2), which replaces a file already there: checking for one first and then moving
            // failed a finished download when another (the same asset, from a second task) took the place between.
            guard rename(temporary.path, destination.path) == 0 else {
                let code = errno
                throw Self.fileError(
                    "could not move the download to \(destination.path): \(String(cString: strerror(code)))", nil)
            }
            synchronizeDirectory(directory.path)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            if error is CancellationError || error is CourierError { throw error }
            throw Self.fileError("could not write \(destination.path)", error)
        }
        return DownloadedFile(url: destination, byteCount: count)
    }

    private static func fileError(_ message: String, _ underlying: (any Error)?) -> CourierError {
        CourierError(code: .fileWriteFailed, stage: .parse, message: message, underlyingError: underlying)
    }
}
