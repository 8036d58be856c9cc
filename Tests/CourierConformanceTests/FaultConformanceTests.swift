import Courier
import CourierTestServer
import Foundation
import HTTPTypes
import Testing

extension Conformance {
    /// Reliability rows 18–26 and 30 on real sockets: every transport against the embedded server's faults.
    @Suite("Conformance: faults and limits", .timeLimit(.minutes(3)))
    struct FaultConformanceTests {
        struct Raw: Request {
            typealias Response = Data
            var method: HTTPRequest.Method = .get
            var path: String
            var query: Parameters? = nil
            var timeout: Duration? = nil
            var maxResponseBodySize: Int? = nil
        }

        /// Runs `body` with a client of `transport` on a fresh embedded server.
        func withEmbedded<T>(
            _ transport: TransportKind,
            configure: (inout Client.Configuration) -> Void = { _ in },
            _ body: (Client, TestServer) async throws -> T
        ) async throws -> T {
            let server = try await TestServer.start()
            do {
                let result = try await body(makeClient(transport, server.baseURL, configure: configure), server)
                try await server.shutdown()
                return result
            } catch {
                try? await server.shutdown()
                throw error
            }
        }

        @Test("row 18: a gzip bomb fails within the limits, never a 200 MiB success", arguments: TransportKind.all)
        func gzipBomb(transport: TransportKind) async throws {
            try await withEmbedded(transport) { client, _ in
                let error = await expectCourierError { try await client.send(Raw(path: "/fault/gzip-bomb")) }
                #expect(
                    error.map { [.decompressionLimit, .bodyTooLarge].contains($0.code) } == true,
                    "\(String(describing: error))")
            }
        }

        @Test("row 18: six stacked Content-Encodings never yield a body", arguments: TransportKind.all)
        func stackedEncodings(transport: TransportKind) async throws {
            try await withEmbedded(transport) { client, _ in
                do {
                    let body = try await client.send(Raw(path: "/fault/stacked-encodings"))
                    #expect(body.count < 1_000_000)
                } catch let error as CourierError {
                    #expect(error.stage == .transport || error.stage == .decide)
                }
            }
        }

        @Test(
            "row 19: over the limit with Content-Length, chunked; HEAD with a large length passes",
            arguments: TransportKind.all)
        func bodyLimits(transport: TransportKind) async throws {
            let limited: @Sendable (inout Client.Configuration) -> Void = { $0.maxResponseBodySize = 64 * 1024 }
            try await withEmbedded(transport, configure: limited) { client, _ in
                for path in ["/bytes/200000", "/stream-bytes/200000"] {
                    let error = await expectCourierError { try await client.send(Raw(path: path)) }
                    #expect(error?.code == .bodyTooLarge, "\(path)")
                }
                let head = try await client.send(Raw(method: .head, path: "/bytes/200000"))
                #expect(head.isEmpty)
            }
        }

        @Test(
            "row 20: a header flood and a 1 MiB header are malformedResponse, not crashes, and are not retried",
            arguments: TransportKind.all)
        func headerFlood(transport: TransportKind) async throws {
            try await withEmbedded(transport) { client, server in
                for path in ["/fault/header-flood", "/fault/huge-header"] {
                    let before = server.requestCount
                    let error = await expectCourierError { try await client.send(Raw(path: path)) }
                    #expect(error?.stage == .transport, "\(path)")
                    // The same code on both transports (AsyncHTTPClient: NIO's header limit; URLSession: libcurl's).
                    #expect(error?.code == .malformedResponse, "\(path): \(String(describing: error))")
                    // The server would send the same head again: before, URLSession's was a reset, retried twice.
                    #expect(server.requestCount - before == 1, "\(path)")
                }
            }
        }

        @Test(
            "row 21: truncated bodies are errors, never a short success",
            arguments: TransportKind.all,
            [
                "/fault/truncate?announce=100&send=9", "/fault/reset-mid-body?announce=100&send=9",
                "/fault/chunked-truncated",
            ]
        )
        func truncation(transport: TransportKind, path: String) async throws {
            try await withEmbedded(transport) { client, _ in
                let parts = path.split(separator: "?", maxSplits: 1)
                var request = Raw(path: String(parts[0]))
                if parts.count == 2 {
                    request.query = Parameters(
                        Dictionary(
                            uniqueKeysWithValues: parts[1].split(separator: "&").map {
                                let pair = $0.split(separator: "=")
                                return (String(pair[0]), String(pair[1]))
                            })
                    )
                }
                let error = await expectCourierError { try await client.send(request) }
                #expect(error?.code == .truncatedResponse, "\(String(describing: error))")
            }
        }

        @Test(
            "row 22: conflicting Content-Length is rejected, and the next request is unaffected",
            arguments: TransportKind.all)
        func conflictingLengths(transport: TransportKind) async throws {
            try await withEmbedded(transport) { client, _ in
                let error = await expectCourierError {
                    try await client.send(Raw(path: "/fault/duplicate-content-length"))
                }
                #expect(error?.stage == .transport)
                let next = try await client.send(Raw(path: "/bytes/10"))
                #expect(next.count == 10)
            }
        }

        @Test("row 22: an unsolicited extra response cannot answer the next request", arguments: TransportKind.all)
        func extraResponse(transport: TransportKind) async throws {
            try await withEmbedded(transport) { client, _ in
                _ = try? await client.send(Raw(path: "/fault/extra-response"))
                struct UUIDReply: Decodable, Sendable { let uuid: String }
                struct GetUUID: Request {
                    typealias Response = UUIDReply
                    var path: String { "/uuid" }
                }
                let reply = try await client.send(GetUUID())
                #expect(!reply.uuid.isEmpty)
            }
        }

        @Test("row 24: the overall deadline ends a drip and a stall after headers", arguments: TransportKind.all)
        func deadlines(transport: TransportKind) async throws {
            try await withEmbedded(transport) { client, _ in
                for path in ["/fault/drip", "/fault/stall-after-headers", "/fault/never-answer"] {
                    let start = ContinuousClock.now
                    var request = Raw(path: path, timeout: .milliseconds(400))
                    if path == "/fault/drip" { request.query = ["bytes": 200, "interval_ms": 50] }
                    let error = await expectCourierError { try await client.send(request) }
                    #expect(error?.code == .timedOut, "\(path)")
                    // The drip takes 10 s and the others never end: well under that is the deadline at work.
                    #expect(ContinuousClock.now - start < .seconds(6), "\(path)")
                }
            }
        }

        @Test(
            "row 25: a server closing the idle pooled connection does not fail the next GET",
            arguments: TransportKind.all)
        func staleKeepAlive(transport: TransportKind) async throws {
            try await withEmbedded(transport) { client, _ in
                _ = try await client.send(Raw(path: "/fault/close-idle-after-response"))
                let next = try await client.send(Raw(path: "/bytes/16"))
                #expect(next.count == 16)
            }
        }

        @Test("row 30: cancelling before the head and mid-body returns promptly", arguments: TransportKind.all)
        func cancellation(transport: TransportKind) async throws {
            try await withEmbedded(transport) { client, server in
                for path in ["/fault/never-answer", "/fault/stall-after-headers"] {
                    let before = server.requestCount
                    let task = Task { try await client.send(Raw(path: path)) }
                    // Cancelled once the server has the request: the call is waiting on the socket, not about to
                    // start (a cancel before the first step returns at once whatever the transport does).
                    try await Self.waitUntil { server.requestCount == before + 1 }
                    let cancelled = ContinuousClock.now
                    task.cancel()
                    await #expect(throws: CancellationError.self) { try await task.value }
                    // Neither route ever finishes, and the idle timeout is 60 s: only the cancellation ends them.
                    let elapsed = ContinuousClock.now - cancelled
                    #expect(elapsed < .seconds(1), "\(path): \(elapsed)")
                    #expect(server.requestCount == before + 1, "\(path): sent once")
                }
            }
        }

        @Test(
            "row 30: cancelling during a retry's back-off returns at once, and sends nothing more",
            arguments: TransportKind.all)
        func cancellationDuringBackOff(transport: TransportKind) async throws {
            try await withEmbedded(transport) { client, server in
                server.register("GET", "/busy") { _ in
                    TestServerResponse(status: 503, headers: [("Retry-After", "30")], body: Array("busy".utf8))
                }
                let task = Task { try await client.send(Raw(path: "/busy")) }
                // The 503 is in; the call now waits 30 s before its next attempt.
                try await Self.waitUntil { server.requestCount == 1 }
                let cancelled = ContinuousClock.now
                task.cancel()
                await #expect(throws: CancellationError.self) { try await task.value }
                let elapsed = ContinuousClock.now - cancelled
                #expect(elapsed < .seconds(1), "\(elapsed)")
                #expect(server.requestCount == 1)
            }
        }

        @Test(
            "row 17 on the wire: exactly one correct framing header arrives, whatever the request set",
            arguments: TransportKind.all)
        func framingOnTheWire(transport: TransportKind) async throws {
            /// A request with the framing headers a careless caller sets.
            struct Framed: Request {
                typealias Response = Data
                var method: HTTPRequest.Method
                var path: String { "/framing" }
                var headers: RequestHeaders
                var body: RequestBody?
            }
            /// The framing fields and body of each request the server received, in order.
            actor Seen {
                var requests: [(lengths: [String], encodings: [String], body: String)] = []
                func add(_ request: TestServerRequest) {
                    let fields = request.headers
                    requests.append(
                        (
                            fields.filter { $0.name.lowercased() == "content-length" }.map(\.value),
                            fields.filter { $0.name.lowercased() == "transfer-encoding" }.map(\.value),
                            String(decoding: request.body, as: UTF8.self)
                        ))
                }
            }
            try await withEmbedded(transport) { client, server in
                let seen = Seen()
                for method in ["GET", "POST"] {
                    server.register(method, "/framing") { request in
                        await seen.add(request)
                        return .text("ok")
                    }
                }
                let wrong: RequestHeaders = ["Content-Length": "99", "Transfer-Encoding": "gzip"]
                _ = try await client.send(Framed(method: .post, headers: wrong, body: .text("hello world!")))
                _ = try await client.send(Framed(method: .get, headers: ["Content-Length": "5"], body: nil))
                let requests = await seen.requests
                try #require(requests.count == 2)
                #expect(requests[0].lengths == ["12"], "\(requests[0])")
                #expect(requests[0].encodings.isEmpty, "\(requests[0])")
                #expect(requests[0].body == "hello world!")
                #expect(
                    requests[1].lengths.allSatisfy { $0 == "0" } && requests[1].lengths.count <= 1, "\(requests[1])")
                #expect(requests[1].encodings.isEmpty, "\(requests[1])")
            }
        }

        /// Waits until `condition` holds, checking every few milliseconds; fails the test after `limit`.
        static func waitUntil(
            limit: Duration = .seconds(10), _ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation
        ) async throws {
            let deadline = ContinuousClock.now + limit
            while !condition() {
                guard ContinuousClock.now < deadline else {
                    Issue.record("the condition did not hold within \(limit)", sourceLocation: sourceLocation)
                    return
                }
                try await Task.sleep(for: .milliseconds(5))
            }
        }

        @Test("streaming: a 64 MiB download goes to a file with progress", arguments: TransportKind.all)
        func downloadToFile(transport: TransportKind) async throws {
            struct Download: Request {
                typealias Response = DownloadedFile
                let destination: URL
                var path: String { "/stream-bytes/67108864" }
                var parser: any ResponseParser<DownloadedFile> { DownloadParser(destination: destination) }
            }
            try await withEmbedded(transport) { client, _ in
                let destination = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID())")
                defer { try? FileManager.default.removeItem(at: destination) }
                let transfer = client.transfer(Download(destination: destination))
                var last: TransferProgress?
                for await step in transfer.progress where step.direction == .download { last = step }
                let file = try await transfer.value
                #expect(file.byteCount == 67_108_864)
                #expect(last?.completedBytes == 67_108_864)
                let size = try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? NSNumber
                #expect(size?.int64Value == 67_108_864)
            }
        }

        @Test("streaming: an upload from a file arrives whole", arguments: TransportKind.all)
        func uploadFromFile(transport: TransportKind) async throws {
            struct Uploaded: Decodable, Sendable { let bytes: Int }
            struct Upload: Request {
                typealias Response = Uploaded
                let file: URL
                var method: HTTPRequest.Method { .post }
                var path: String { "/upload" }
                var body: RequestBody? { .file(file) }
            }
            try await withEmbedded(transport) { client, _ in
                let source = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID())")
                try Data(repeating: 0x5A, count: 8 * 1024 * 1024 + 3).write(to: source)
                defer { try? FileManager.default.removeItem(at: source) }
                let reply = try await client.send(Upload(file: source))
                #expect(reply.bytes == 8 * 1024 * 1024 + 3)
            }
        }

        @Test(
            "an upload from a symbolic link (a relative one, as in a Kubernetes secret mount) sends the file it names",
            arguments: TransportKind.all)
        func uploadThroughSymbolicLink(transport: TransportKind) async throws {
            struct Uploaded: Decodable, Sendable { let bytes: Int }
            struct Upload: Request {
                typealias Response = Uploaded
                let body: RequestBody?
                var method: HTTPRequest.Method { .post }
                var path: String { "/upload" }
            }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-link-\(UUID())")
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent("..data"), withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let size = 1704
            try Data(repeating: 0x41, count: size).write(to: directory.appendingPathComponent("..data/tls.pem"))
            let link = directory.appendingPathComponent("tls.pem")
            try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "..data/tls.pem")
            try await withEmbedded(transport) { client, _ in
                let whole = try await client.send(Upload(body: .file(link)))
                #expect(whole.bytes == size)
                let multipart = try await client.send(
                    Upload(body: .multipart([.file(name: "cert", fileURL: link, filename: "tls.pem")])))
                #expect(multipart.bytes > size)
            }
        }

        @Test(
            "a streamed upload shorter or longer than its declared length fails as the request's fault, sent once",
            arguments: TransportKind.all, [5, 1])
        func uploadLengthMismatch(transport: TransportKind, declared: Int64) async throws {
            struct Upload: Request {
                typealias Response = Data
                let declared: Int64
                var method: HTTPRequest.Method { .put }
                var path: String { "/upload" }
                var timeout: Duration? { .seconds(10) }
                var body: RequestBody? {
                    // Three bytes, though the body says five or one: a file that shrank or grew, a miscounted
                    // sequence.
                    .stream(MessageBody(ThreeBytes(), length: .known(declared), iterationBehavior: .multiple))
                }
            }
            struct ThreeBytes: AsyncSequence, Sendable {
                struct AsyncIterator: AsyncIteratorProtocol {
                    var sent = false
                    mutating func next() async -> ArraySlice<UInt8>? {
                        defer { sent = true }
                        return sent ? nil : ArraySlice("abc".utf8)
                    }
                }
                func makeAsyncIterator() -> AsyncIterator { AsyncIterator() }
            }
            try await withEmbedded(transport) { client, server in
                let before = server.requestCount
                let error = await expectCourierError { try await client.send(Upload(declared: declared)) }
                #expect(error?.code == .invalidBody, "\(String(describing: error))")
                #expect(error?.message?.contains("declared") == true)
                #expect(server.requestCount - before <= 1, "not retried: the server is not at fault")
            }
        }

        @Test(
            "retry on the wire: 503 with Retry-After: 1, then 200; the wait is honoured", arguments: TransportKind.all)
        func retryAfterOnTheWire(transport: TransportKind) async throws {
            try await withEmbedded(transport) { client, server in
                let attempts = Attempts()
                server.register("GET", "/flaky") { _ in
                    await attempts.next() == 1
                        ? TestServerResponse(status: 503, headers: [("Retry-After", "1")], body: Array("busy".utf8))
                        : .text("recovered")
                }
                let start = ContinuousClock.now
                let body = try await client.send(Raw(path: "/flaky"))
                #expect(String(decoding: body, as: UTF8.self) == "recovered")
                #expect(await attempts.count == 2)
                #expect(ContinuousClock.now - start >= .seconds(1))
            }
        }

        actor Attempts {
            private(set) var count = 0
            func next() -> Int {
                count += 1
                return count
            }
        }
    }
}
