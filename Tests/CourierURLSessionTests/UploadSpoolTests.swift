import Courier
import Foundation
import HTTPTypes
import Testing

@testable import CourierURLSession

/// Streamed uploads the Apple way (through a temporary file: ``UploadSpool``), run here on Linux by choosing it.
/// In ``URLSessionTransportTests``' serialized suite, for its server and so that its memory figures are not skewed
/// by the other URLSession tests.
extension URLSessionTransportTests {
    /// A transport that spools streamed bodies into `directory`.
    func spoolingTransport(into directory: URL) -> URLSessionTransport {
        URLSessionTransport(
            configuration: URLSessionTransport.defaultConfiguration(),
            connectTimeout: .seconds(10),
            idleTimeout: .seconds(60),
            maxDecompressedBytes: 100 * 1024 * 1024,
            maxDecompressionRatio: 100,
            responseBufferSize: 4 * 1024 * 1024,
            maxConcurrentRequests: 64,
            streamedUploads: .spool,
            spoolDirectory: directory
        )
    }

    /// A new empty directory of this test's own, for the spool files (each request's is removed when it ends).
    func spoolDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-spool-test-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        return directory
    }

    func files(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path)
    }

    /// `count` chunks of `chunk` (the same storage each time: the stream holds one copy of the bytes).
    func chunks(_ chunk: ArraySlice<UInt8>, count: Int) -> AsyncStream<ArraySlice<UInt8>> {
        AsyncStream { continuation in
            for _ in 0..<count { continuation.yield(chunk) }
            continuation.finish()
        }
    }

    @Test("a streamed body over the old 64 MiB limit is sent whole, with a Content-Length, never held in memory")
    func spoolsALargeStreamedUpload() async throws {
        defer { server.stop() }
        let directory = try spoolDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let transport = spoolingTransport(into: directory)
        let chunk = ArraySlice((0..<(64 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) })
        let count = 2 * 1024  // 128 MiB
        let rssBefore = try MemoryProbe.residentBytes()
        let body = MessageBody(chunks(chunk, count: count), length: .unknown, iterationBehavior: .single)
        let response = try await transport.send(try request(.put, "/echo", body: body), context: TransportContext())
        #expect(response.head.status == .ok)
        #expect(response.head.headerFields[try #require(HTTPField.Name("X-Echo-Chunked"))] == "0")
        let headers = try echoedHeaders(response.head)
        #expect(headers["content-length"] == String(chunk.count * count))
        // The echo, checked at every 997th byte (a byte-by-byte loop over 128 MiB in a debug build would take the
        // CPU from the suites running beside this one for seconds).
        var received = 0
        var mismatches = 0
        var peak = rssBefore
        var reads = 0
        for try await part in response.body {
            var offset = (997 - received % 997) % 997
            while offset < part.count {
                let position = received + offset
                let expected = chunk[chunk.startIndex + position % chunk.count]
                if part[part.startIndex + offset] != expected { mismatches += 1 }
                offset += 997
            }
            received += part.count
            reads += 1
            if reads % 256 == 0 { peak = max(peak, try MemoryProbe.residentBytes()) }
        }
        peak = max(peak, try MemoryProbe.residentBytes())
        print("spooled \(chunk.count * count / 1_048_576) MiB upload: RSS growth \((peak - rssBefore) / 1024) KiB")
        #expect(received == chunk.count * count)
        #expect(mismatches == 0)
        // Collected in memory, the body alone would add 128 MiB. RSS is the whole process's, shared with the suites
        // running beside this one: alone, the upload grew it by 17–21 MiB; with the streaming suites alongside
        // (`--filter "LiveResponse|Stream|OpenAPI"`), by 46–90 MiB, which failed a bound of 64 MiB. So the bound is
        // the body's size, which a copy in memory reaches by itself. (A 256 MiB body, for a wider margin, kept the
        // CPU busy long enough to delay the event-stream heartbeat tests beside it past their idle timeout.)
        #expect(peak - rssBefore < chunk.count * count)
        #expect(try files(in: directory).isEmpty)
    }

    @Test("a streamed body that produces another length than it states fails with invalidBody, and leaves no file")
    func aSpooledBodyOfTheWrongLengthFails() async throws {
        defer { server.stop() }
        let directory = try spoolDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let transport = spoolingTransport(into: directory)
        let body = MessageBody(
            chunks(ArraySlice(repeating: 1, count: 50), count: 1), length: .known(100), iterationBehavior: .single)
        let error = await #expect(throws: CourierError.self) {
            _ = try await transport.send(try request(.put, "/echo", body: body), context: TransportContext())
        }
        #expect(error?.code == .invalidBody)
        #expect(try files(in: directory).isEmpty)
    }

    @Test("a streamed body that fails fails the call with transportFailed and its error underneath, and leaves no file")
    func aFailingSpooledBodyFails() async throws {
        struct Broken: Error {}
        defer { server.stop() }
        let directory = try spoolDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let transport = spoolingTransport(into: directory)
        let stream = AsyncThrowingStream<ArraySlice<UInt8>, any Error> { continuation in
            continuation.yield(ArraySlice(repeating: 2, count: 1000))
            continuation.finish(throwing: Broken())
        }
        let body = MessageBody(stream, length: .unknown, iterationBehavior: .single)
        let error = await #expect(throws: CourierError.self) {
            _ = try await transport.send(try request(.put, "/echo", body: body), context: TransportContext())
        }
        #expect(error?.code == .transportFailed)
        #expect(error?.underlyingError is Broken)
        #expect(try files(in: directory).isEmpty)
    }

    @Test(
        "the spool file is removed when the request fails after it was written: a refused connection, a shut-down transport"
    )
    func aFailedRequestLeavesNoSpoolFile() async throws {
        defer { server.stop() }
        let directory = try spoolDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let transport = spoolingTransport(into: directory)
        let port = try MemoryProbe.unusedPort()
        let refused = try #require(URL(string: "http://127.0.0.1:\(port)/"))
        func body() -> MessageBody {
            MessageBody(
                chunks(ArraySlice(repeating: 3, count: 4096), count: 4), length: .unknown, iterationBehavior: .single)
        }
        let error = await #expect(throws: CourierError.self) {
            _ = try await transport.send(
                OutgoingRequest(head: HTTPRequest(method: .put, url: refused), body: body()),
                context: TransportContext())
        }
        #expect(error?.code == .connectionRefused)
        #expect(try files(in: directory).isEmpty)

        transport.shutdown()
        await #expect(throws: (any Error).self) {
            _ = try await transport.send(try request(.put, "/echo", body: body()), context: TransportContext())
        }
        #expect(try files(in: directory).isEmpty)
    }

    @Test("with the platform's default uploads, a file body goes with its Content-Length, not chunked")
    func aFileBodyHasItsLengthByDefault() async throws {
        // On Linux the default sends a streamed body through a pipe, chunked; a file's size is known, and a presigned
        // PUT (S3, GCS) answers a chunked upload with 411 Length Required.
        defer { server.stop() }
        let directory = try spoolDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("upload.bin")
        let bytes = Data((0..<(1024 * 1024 + 5)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try bytes.write(to: source)

        let response = try await transport.send(
            try request(.put, "/echo", body: try MessageBody.file(at: source)), context: TransportContext())
        #expect(response.head.status == .ok)
        #expect(response.head.headerFields[try #require(HTTPField.Name("X-Echo-Chunked"))] == "0")
        #expect(try echoedHeaders(response.head)["content-length"] == String(bytes.count))
        #expect(try await response.body.collect(upTo: 2 * 1024 * 1024) == bytes)
    }

    @Test("a file body is sent from its own file: not copied, not removed")
    func aFileBodyIsSentFromItsFile() async throws {
        defer { server.stop() }
        let directory = try spoolDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("photo.bin")
        let bytes = Data((0..<(2 * 1024 * 1024 + 17)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try bytes.write(to: source)
        // The spool "directory" is under a regular file, where nothing can be created (not even by root): a copy
        // would fail the call.
        let transport = spoolingTransport(into: source.appendingPathComponent("spool"))

        let body = try MessageBody.file(at: source)
        let response = try await transport.send(try request(.put, "/echo", body: body), context: TransportContext())
        #expect(response.head.status == .ok)
        #expect(try echoedHeaders(response.head)["content-length"] == String(bytes.count))
        #expect(try await response.body.collect(upTo: 4 * 1024 * 1024) == bytes)
        #expect(FileManager.default.fileExists(atPath: source.path), "the caller's file is not removed")
    }
}
