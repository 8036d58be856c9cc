import Courier
import CourierTestServer
import Foundation
import HTTPTypes
import Testing

extension Conformance {
    /// Uploads against servers that read slowly or stop reading, on real sockets: the idle timeout ends a stalled
    /// upload, and does not end one that is still being taken.
    @Suite("Conformance: uploads and the idle timeout", .timeLimit(.minutes(2)))
    struct UploadStallConformanceTests {
        struct Upload: Request {
            typealias Response = Data
            let upload: RequestBody
            var method: HTTPRequest.Method { .post }
            var path: String { "/upload" }
            var body: RequestBody? { upload }
            var retryPolicy: RetryPolicy? { .disabled }
        }

        /// `count` chunks of 64 KiB, made as they are asked for (a large file or a live source).
        struct Chunks: AsyncSequence, Sendable {
            let count: Int
            struct AsyncIterator: AsyncIteratorProtocol {
                var left: Int
                mutating func next() async -> ArraySlice<UInt8>? {
                    guard left > 0 else { return nil }
                    left -= 1
                    return ArraySlice(repeating: 0x61, count: 64 * 1024)
                }
            }
            func makeAsyncIterator() -> AsyncIterator { AsyncIterator(left: count) }
        }

        /// What `operation` returned or threw, or `nil` when it had not ended after `limit` (then it is cancelled).
        static func outcome<T: Sendable>(
            within limit: Duration, _ operation: @escaping @Sendable () async throws -> T
        ) async -> Result<T, any Error>? {
            await withTaskGroup(of: Result<T, any Error>?.self) { group in
                group.addTask {
                    do { return .success(try await operation()) } catch { return .failure(error) }
                }
                group.addTask {
                    try? await Task.sleep(for: limit)
                    return nil
                }
                defer { group.cancelAll() }
                return await group.next() ?? nil
            }
        }

        @Test(
            "a server that stops reading a streamed upload fails it with idleTimeout at the idle timeout",
            arguments: TransportKind.all)
        func stalledStreamedUpload(transport: TransportKind) async throws {
            let silent = try Sockets.SilentListener()
            let url = try #require(URL(string: "http://127.0.0.1:\(silent.port)"))
            let client = Client(
                server: Server(baseURL: url), transport: transport.makeWithTimeouts(.seconds(5), .seconds(1)))
            // 256 MiB, far more than the sockets' buffers hold; no deadline, so only the idle timeout can end it.
            let body = MessageBody(
                Chunks(count: 4096), length: .known(4096 * 64 * 1024), iterationBehavior: .multiple)
            let start = ContinuousClock.now
            let result = await Self.outcome(within: .seconds(20)) {
                try await client.send(Upload(upload: .stream(body)))
            }
            let elapsed = ContinuousClock.now - start
            let error = try #require(result, "still uploading after \(elapsed): nothing ended the stalled upload")
            guard case .failure(let failure) = error else {
                Issue.record("the upload to a server that never reads succeeded")
                return
            }
            let courierError = failure as? CourierError
            #expect(courierError?.code == .idleTimeout, "\(failure)")
            // At the idle timeout after the last chunk was taken (1 s), late only by the machine's scheduling.
            #expect(elapsed >= .milliseconds(900) && elapsed < .seconds(5), "took \(elapsed)")
            print("conformance: \(transport.name) · upload to a server that stops reading: \(failure) in \(elapsed)")
        }

        @Test("a file body goes with its Content-Length on AsyncHTTPClient (URLSession on Linux sends it chunked)")
        func fileBodyHasLength() async throws {
            let transport = TransportKind.asyncHTTPClient
            let size = 256 * 1024 + 5
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-length-\(UUID())")
            try Data(repeating: 0x63, count: size).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            try await withTestServer { server in
                server.register("POST", "/upload") { request in
                    let length = request.header("Content-Length") ?? "none"
                    return .text("\(length) \(request.header("Transfer-Encoding") ?? "none")")
                }
                let client = Client(server: Server(baseURL: server.baseURL), transport: transport.make())
                let answer = try await client.send(Upload(upload: .file(file)))
                #expect(String(decoding: answer, as: UTF8.self) == "\(size) none")
            }
        }

        @Test(
            "a large in-memory upload to a slow reader succeeds: the idle timeout counts from the end of the upload",
            arguments: TransportKind.all)
        func slowReaderLargeBody(transport: TransportKind) async throws {
            // 40 MiB at 12 MiB/s: 3.3 s of upload, with a 3 s idle timeout. The server answers once it has read the
            // whole body. In one piece, the body was queued at once and the idle timer started with it: 3 s later,
            // a tenth of it was still unread. In slices, what is queued ahead of the server is what the sockets
            // buffer (a few MiB), plus what AsyncHTTPClient's body task writes before its event loop reports the
            // connection unwritable: under heavy CPU load (the other suites run beside this one) that was 19 MiB
            // here, and once more than 36 MiB of 48 (the UploadWatch then saw no slice asked for during 3 s, while
            // the server was reading). Of 40 MiB, all but the last 4 MiB would have to be queued ahead at once.
            let size = 40 * 1024 * 1024
            let reader = try Sockets.SlowReader(bytesPerSecond: 12 * 1024 * 1024)
            let url = try #require(URL(string: "http://127.0.0.1:\(reader.port)"))
            let client = Client(
                server: Server(baseURL: url), transport: transport.makeWithTimeouts(.seconds(5), .seconds(3)))
            let start = ContinuousClock.now
            let result = await Self.outcome(within: .seconds(30)) {
                try await client.send(Upload(upload: .bytes(Data(repeating: 0x62, count: size))))
            }
            let elapsed = ContinuousClock.now - start
            switch result {
            case .success(let body)?:
                #expect(String(decoding: body, as: UTF8.self) == "ok")
                #expect(reader.bodyBytesRead == size)
            case .failure(let error)? where transport == .asyncHTTPClient:
                // Under the other suites' load AsyncHTTPClient's body task has queued the whole body ahead of its
                // event loop (its writes do not wait for the socket until the loop reports the connection
                // unwritable): it then takes the upload as sent, and its read timer counts the rest of the drain
                // (`connectionReset`, "I/O on closed channel", after 3 s), or the UploadWatch sees no slice asked for
                // (`idleTimeout`). Courier cannot see that backlog; with the default 60 s idle timeout it would
                // take 60 s of bandwidth queued at once. A known, intermittent issue (2 of 6 full runs on this 2-CPU
                // machine): reported in the run's output, not a failure; a success still checks every byte.
                withKnownIssue(
                    "AsyncHTTPClient's body task can queue a large upload ahead of its event loop", isIntermittent: true
                ) {
                    Issue.record("the upload failed after \(elapsed): \(error)")
                }
            case .failure(let error)?:
                Issue.record("the upload failed after \(elapsed): \(error)")
            case nil:
                Issue.record("the upload did not end within 30 s")
            }
            print("conformance: \(transport.name) · 40 MiB to a reader at 12 MiB/s, idle 3 s: done in \(elapsed)")
        }
    }
}
