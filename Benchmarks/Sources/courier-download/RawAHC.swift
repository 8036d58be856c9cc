import AsyncHTTPClient
import Foundation
import NIOCore

/// The baseline: AsyncHTTPClient used directly, with the file read and written through `FileHandle` in 64 KiB
/// chunks as Courier does (and `fsync`ed at the end of a download, as Courier's `DownloadParser` does).
struct RawAHCStreaming {
    let http = HTTPClient(eventLoopGroupProvider: .singleton)
    let baseURL: URL

    /// `GET /stream-bytes/{bytes}` into `destination`.
    ///
    /// - Returns: The bytes written.
    func download(bytes: Int, to destination: URL) async throws -> Int64 {
        let request = HTTPClientRequest(url: baseURL.appendingPathComponent("stream-bytes/\(bytes)").absoluteString)
        let response = try await http.execute(request, deadline: .distantFuture)
        guard response.status == .ok else { throw UnexpectedStatus(code: Int(response.status.code)) }
        guard FileManager.default.createFile(atPath: destination.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        let handle = try FileHandle(forWritingTo: destination)
        defer { try? handle.close() }
        var count: Int64 = 0
        for try await buffer in response.body {
            try buffer.withUnsafeReadableBytes { try handle.write(contentsOf: $0) }
            count += Int64(buffer.readableBytes)
        }
        try handle.synchronize()
        return count
    }

    /// `POST /upload` with `source` streamed from disk with its known length.
    ///
    /// - Returns: The byte count the server reported.
    func upload(from source: URL, bytes: Int64) async throws -> Int64 {
        var request = HTTPClientRequest(url: baseURL.appendingPathComponent("upload").absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/octet-stream")
        request.body = .stream(FileBuffers(url: source), length: .known(bytes))
        let response = try await http.execute(request, deadline: .distantFuture)
        let body = try await response.body.collect(upTo: 1024 * 1024)
        guard response.status == .ok else { throw UnexpectedStatus(code: Int(response.status.code)) }
        struct Counted: Decodable { let bytes: Int64 }
        return try JSONDecoder().decode(Counted.self, from: Data(body.readableBytesView)).bytes
    }

    func shutdown() async {
        try? await http.shutdown()
    }
}

/// The server answered with something other than 200.
struct UnexpectedStatus: Error {
    let code: Int
}

/// A file's bytes as `ByteBuffer`s of 64 KiB, read with `FileHandle` on demand.
struct FileBuffers: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let url: URL

    struct AsyncIterator: AsyncIteratorProtocol {
        let url: URL
        var handle: FileHandle?
        let allocator = ByteBufferAllocator()

        mutating func next() async throws -> ByteBuffer? {
            if handle == nil { handle = try FileHandle(forReadingFrom: url) }
            guard let data = try handle?.read(upToCount: 64 * 1024), !data.isEmpty else {
                try handle?.close()
                handle = nil
                return nil
            }
            var buffer = allocator.buffer(capacity: data.count)
            buffer.writeBytes(data)
            return buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(url: url) }
}
