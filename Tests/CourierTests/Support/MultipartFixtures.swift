import CourierTesting
import Foundation
import HTTPTypes
import Testing

@testable import CourierCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Helpers for reading multipart bodies back in tests.
enum MultipartFixtures {
    /// One part as parsed back from the wire.
    struct ParsedPart: Equatable {
        var headers: [String]
        var content: [UInt8]

        /// The `Content-Disposition` line's value.
        var disposition: String? { header("Content-Disposition") }
        /// The `Content-Type` line's value.
        var contentType: String? { header("Content-Type") }

        func header(_ name: String) -> String? {
            let prefix = name.lowercased() + ": "
            return headers.first { $0.lowercased().hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
        }
    }

    /// The boundary from a `multipart/form-data; boundary=…` content type.
    static func boundary(from contentType: String?) throws -> String {
        let value = try #require(contentType)
        let prefix = "multipart/form-data; boundary="
        try #require(value.hasPrefix(prefix), "unexpected Content-Type \(value)")
        return String(value.dropFirst(prefix.count))
    }

    /// Splits a body strictly by RFC 2046 rules: `--B CRLF` first, `CRLF --B CRLF` between parts, `CRLF --B--
    /// CRLF` at the end, nothing before or after.
    static func parse(_ body: [UInt8], boundary: String) throws -> [ParsedPart] {
        let opening = Array("--\(boundary)\r\n".utf8)
        let delimiter = Array("\r\n--\(boundary)".utf8)
        let closing = Array("\r\n--\(boundary)--\r\n".utf8)
        try #require(body.starts(with: opening), "the body does not start with the boundary line")
        try #require(body.suffix(closing.count).elementsEqual(closing), "the body does not end with the close")
        var parts: [ParsedPart] = []
        var cursor = opening.count
        while true {
            let rest = body[cursor...]
            let end = try #require(rest.firstRange(of: delimiter), "unterminated part")
            let raw = body[cursor..<end.lowerBound]
            let blank = try #require(raw.firstRange(of: Array("\r\n\r\n".utf8)), "part without a blank line")
            let headerText = String(decoding: raw[raw.startIndex..<blank.lowerBound], as: UTF8.self)
            parts.append(
                ParsedPart(
                    headers: headerText.components(separatedBy: "\r\n"),
                    content: Array(raw[blank.upperBound...])
                )
            )
            let after = end.upperBound
            if body[after...].starts(with: Array("--\r\n".utf8)) {
                try #require(after + 4 == body.count, "bytes after the closing boundary")
                return parts
            }
            try #require(body[after...].starts(with: Array("\r\n".utf8)), "boundary not followed by CRLF")
            cursor = after + 2
        }
    }

    /// A POST of `form` through a fresh mock client; returns the recorded request.
    static func send(_ form: MultipartFormData) async throws -> MockTransport.RecordedRequest {
        let (client, mock) = Fixtures.client()
        mock.stub(.post, "/probe", with: .text("ok"))
        var probe = Probe(method: .post)
        probe.body = .multipart(form)
        _ = try await client.send(probe)
        return try #require(mock.recordedRequests.last)
    }

    /// The boundary and parsed parts of a recorded multipart request.
    static func parts(of request: MockTransport.RecordedRequest) throws -> (boundary: String, parts: [ParsedPart]) {
        let boundary = try boundary(from: request.head.headerFields[.contentType])
        let body = try #require(request.body)
        return (boundary, try parse([UInt8](body), boundary: boundary))
    }

    /// A temporary file of `count` bytes (a repeating pattern), written in 1 MiB pieces.
    static func temporaryFile(count: Int, name: String = "upload.bin") throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-mp-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try #require(FileManager.default.createFile(atPath: url.path, contents: nil))
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        let piece = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        var remaining = count
        while remaining > 0 {
            let size = min(remaining, piece.count)
            try handle.write(contentsOf: piece.prefix(size))
            remaining -= size
        }
        return url
    }

    /// Removes a file made by ``temporaryFile(count:name:)`` and its directory.
    static func remove(_ url: URL) {
        try? FileManager.default.removeItem(at: url.deletingLastPathComponent())
    }

    /// A one-shot body yielding `chunks`.
    static func oneShot(_ chunks: [[UInt8]], length: MessageBody.Length) -> MessageBody {
        let stream = AsyncStream<ArraySlice<UInt8>> { continuation in
            for chunk in chunks { continuation.yield(ArraySlice(chunk)) }
            continuation.finish()
        }
        return MessageBody(stream, length: length, iterationBehavior: .single)
    }

    /// Reads a body, returning its bytes and chunk sizes.
    static func drain(_ body: MessageBody) async throws -> (bytes: [UInt8], chunkSizes: [Int]) {
        var bytes: [UInt8] = []
        var sizes: [Int] = []
        for try await chunk in body {
            bytes.append(contentsOf: chunk)
            sizes.append(chunk.count)
        }
        return (bytes, sizes)
    }
}

/// A random generator replaying fixed values, to make boundaries predictable in tests.
struct ScriptedGenerator: RandomNumberGenerator {
    var values: [UInt64]
    private var index = 0

    init(_ values: [UInt64]) {
        self.values = values
    }

    mutating func next() -> UInt64 {
        defer { index += 1 }
        return values[index % values.count]
    }
}

/// A named pipe in the temporary directory that a thread (not a task: opening a pipe blocks until both ends are open)
/// writes `bytes` into once, then closes; remove it with `unlink` when done.
func makeNamedPipe(writing bytes: Data) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-fifo-\(UUID())").path
    try #require(mkfifo(path, 0o600) == 0)
    Thread.detachNewThread {
        let handle = FileHandle(forWritingAtPath: path)
        handle?.write(bytes)
        try? handle?.close()
    }
    return path
}
