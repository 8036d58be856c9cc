import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Streaming to and from files, and progress as an `AsyncSequence`.
@Suite("Transfers", .timeLimit(.minutes(1)))
struct TransferTests {
    struct Download: Request {
        typealias Response = DownloadedFile
        let destination: URL
        var path: String { "/file" }
        var parser: any ResponseParser<DownloadedFile> { DownloadParser(destination: destination) }
    }

    struct Upload: Request {
        typealias Response = String
        let file: URL
        var method: HTTPRequest.Method { .put }
        var path: String { "/upload" }
        var body: RequestBody? { .file(file) }
    }

    static func temporaryURL(_ name: String = UUID().uuidString) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(name)")
    }

    @Test("a directory given as the file to upload fails at adapt with invalidBody; nothing is sent")
    func uploadOfADirectory() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.put, "/upload", with: .text("stored"))
        let directory = Self.temporaryURL()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }

        let error = await expectCourierError { try await client.send(Upload(file: directory)) }
        #expect(error?.code == .invalidBody)
        #expect(error?.stage == .adapt)
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test("an announced Content-Length far past what arrives reserves no such buffer, whatever the limit")
    func hugeAnnouncedLength() async throws {
        /// Announces 2^62 bytes and sends 3 (a hostile server under a request with no size limit).
        struct Liar: Transport {
            func send(_ request: OutgoingRequest, context: TransportContext) async throws -> TransportResponse {
                let chunks = AsyncStream<ArraySlice<UInt8>> { continuation in
                    continuation.yield([1, 2, 3])
                    continuation.finish()
                }
                let body = MessageBody(chunks, length: .known(1 << 62), iterationBehavior: .single)
                return TransportResponse(head: HTTPResponse(status: .ok), body: body)
            }
        }
        let client = Client(
            server: Fixtures.server, transport: Liar(),
            configuration: Client.Configuration(maxResponseBodySize: .max))
        let body = try await client.send(Probe<Data>(parse: { response, _ in response.body }))
        #expect(body == Data([1, 2, 3]))
    }

    @Test("a download streams into the destination file and bypasses the in-memory limit")
    func downloadToFile() async throws {
        let payload = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let (client, mock) = Fixtures.client { $0.maxResponseBodySize = 1000 }
        mock.stub(.get, "/file", with: MockResponse(body: payload, chunkSize: 10_000))
        let destination = Self.temporaryURL()
        defer { try? FileManager.default.removeItem(at: destination) }

        let file = try await client.send(Download(destination: destination))
        #expect(file.byteCount == Int64(payload.count))
        #expect(try Data(contentsOf: destination) == payload)
    }

    @Test("a download whose folder is missing fails with fileWriteFailed at parse, not as an unreachable server")
    func downloadIntoAMissingFolder() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/file", with: MockResponse(body: Data([1, 2, 3])))
        let destination = Self.temporaryURL().appendingPathComponent("file.bin")

        let error = await expectCourierError { try await client.send(Download(destination: destination)) }
        #expect(error?.code == .fileWriteFailed && error?.stage == .parse, "\(String(describing: error))")
        #expect(error?.message?.contains("could not create") == true, "\(String(describing: error))")
        // The user is not told the server is down (an offline banner would misfire).
        #expect(error.map(ErrorMessageProvider.kind(for:)) == .unknown)
        #expect(!FileManager.default.fileExists(atPath: destination.deletingLastPathComponent().path))
        #expect(mock.recordedRequests.count == 1)
    }

    @Test("a destination name of 240 bytes, under the file system's 255, downloads")
    func longDestinationName() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/file", with: MockResponse(body: Data([1, 2, 3])))
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent(
            String(repeating: "\u{6587}", count: 80))  // 80 CJK characters, 3 bytes each
        defer { try? FileManager.default.removeItem(at: destination) }

        let file = try await client.send(Download(destination: destination))
        #expect(file.byteCount == 3)
        #expect(try Data(contentsOf: destination) == Data([1, 2, 3]))
    }

    @Test("a destination that exists is replaced by the finished download in one rename, nothing else left")
    func existingDestinationIsReplaced() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/file", with: MockResponse(body: Data([1, 2, 3])))
        let directory = Self.temporaryURL()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("file.bin")
        try Data("old".utf8).write(to: destination)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: destination.path)

        let file = try await client.send(Download(destination: destination))
        #expect(file.byteCount == 3)
        #expect(try Data(contentsOf: destination) == Data([1, 2, 3]))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["file.bin"])
        let mode = try FileManager.default.attributesOfItem(atPath: destination.path)[.posixPermissions] as? Int
        #expect(mode == 0o600, "the replaced file's permissions are kept")
    }

    @Test("a failed download leaves no file behind, and a non-2xx still decodes as an error")
    func failedDownloadLeavesNothing() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/file", with: .text("0123456789", fault: .resetMidBody(afterBytes: 4)))
        // In a directory of its own, where the temporary file is written too: nothing else is there.
        let directory = Self.temporaryURL()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("file.bin")
        let error = await expectCourierError { try await client.send(Download(destination: destination)) }
        #expect(error?.code == .truncatedResponse)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)

        mock.stub(.get, "/file", with: .text("missing", status: 404))
        let notFound = await expectCourierError { try await client.send(Download(destination: destination)) }
        #expect(notFound?.code == .unacceptableStatus)
        #expect(notFound?.bodyExcerpt == "missing")
    }

    @Test("an upload from a file sends its bytes with an exact Content-Length, and again on a retry")
    func uploadFromFile() async throws {
        let source = Self.temporaryURL()
        let payload = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0) })
        try payload.write(to: source)
        defer { try? FileManager.default.removeItem(at: source) }
        var configuration = Client.Configuration(retryPolicy: .disabled)
        configuration.decisions.append(.retry(1))
        let mock = MockTransport()
        let client = Client(server: Fixtures.server, transport: mock, configuration: configuration)
        mock.stub(.put, "/upload", with: [.status(503), .text("stored")])

        #expect(try await client.send(Upload(file: source)) == "stored")
        let sent = mock.recordedRequests
        try #require(sent.count == 2)
        #expect(sent.allSatisfy { $0.body == payload })
        #expect(sent[0].head.headerFields[.contentLength] == "200000")
    }

    @Test("an upload from a named pipe is sent once: its 503 is not retried with an empty body, nor does it block")
    func uploadFromANamedPipeIsNotResent() async throws {
        let path = try makeNamedPipe(writing: Data("abc".utf8))
        defer { unlink(path) }
        var configuration = Client.Configuration(retryPolicy: .disabled)
        configuration.decisions.append(.retry(1))
        let mock = MockTransport()
        let client = Client(server: Fixtures.server, transport: mock, configuration: configuration)
        mock.stub(.put, "/upload", with: [.status(503), .text("stored")])

        let error = await expectCourierError { try await client.send(Upload(file: URL(fileURLWithPath: path))) }
        // The retry decision does not resend a one-shot body: the 503 is the answer.
        #expect(error?.code == .unacceptableStatus)
        #expect(error?.response?.status.code == 503)
        let sent = mock.recordedRequests
        #expect(sent.count == 1)
        #expect(sent.first?.body == Data("abc".utf8))
        #expect(sent.first?.head.headerFields[.contentLength] == nil)
    }

    @Test("a URL that is not a file URL given as the file to upload is invalidBody at adapt; nothing is sent")
    func uploadOfAWebURL() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.put, "/upload", with: .text("stored"))
        let error = await expectCourierError {
            try await client.send(Upload(file: URL(string: "https://cdn.example/tmp")!))
        }
        #expect(error?.code == .invalidBody)
        #expect(error?.stage == .adapt)
        #expect(error?.message?.contains("not a file URL") == true)
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test("a missing file is a typed error at the adapt stage, and nothing is sent")
    func missingFile() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.put, "/upload", with: .text("stored"))
        let error = await expectCourierError { try await client.send(Upload(file: Self.temporaryURL("missing"))) }
        #expect(error?.code == .invalidBody)
        #expect(error?.stage == .adapt)
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test("progress reports upload then download, ending at the totals")
    func progress() async throws {
        let (client, mock) = Fixtures.client()
        let download = Data(repeating: 7, count: 150_000)
        mock.stub(.post, "/probe", with: MockResponse(body: download, chunkSize: 50_000))
        var probe = Probe(method: .post)
        probe.body = .bytes(Data(repeating: 1, count: 100_000))
        let transfer = client.transfer(probe)
        var steps: [TransferProgress] = []
        for await step in transfer.progress { steps.append(step) }
        let value = try await transfer.value
        #expect(value.utf8.count == download.count)

        let uploads = steps.filter { $0.direction == .upload }
        let downloads = steps.filter { $0.direction == .download }
        #expect(uploads.last?.completedBytes == 100_000)
        #expect(uploads.last?.totalBytes == 100_000)
        #expect(uploads.last?.fractionCompleted == 1)
        #expect(downloads.last?.completedBytes == 150_000)
        #expect(downloads.map(\.completedBytes) == downloads.map(\.completedBytes).sorted())
        #expect(uploads.count >= 2)
        let firstDownload = try #require(steps.firstIndex { $0.direction == .download })
        #expect(steps[..<firstDownload].allSatisfy { $0.direction == .upload })
    }

    @Test("an empty upload and an empty download report their progress once, complete")
    func emptyBodies() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.post, "/probe", with: MockResponse(status: .noContent))
        var probe = Probe(method: .post)
        probe.body = .bytes(Data())
        let transfer = client.transfer(probe)
        var steps: [TransferProgress] = []
        for await step in transfer.progress { steps.append(step) }
        #expect(try await transfer.value.isEmpty)
        // Before: no progress at all, and a UI bound to fractionCompleted never reached 1.
        let upload = try #require(steps.last { $0.direction == .upload })
        #expect(upload.completedBytes == 0 && upload.totalBytes == 0 && upload.fractionCompleted == 1)
        let download = try #require(steps.last { $0.direction == .download })
        #expect(download.completedBytes == 0)
    }

    @Test("cancelling a transfer ends its progress and throws CancellationError")
    func cancelTransfer() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .status(200, fault: .stall))
        let transfer = client.transfer(Probe())
        transfer.cancel()
        for await _ in transfer.progress {}
        await #expect(throws: CancellationError.self) { try await transfer.value }
    }

    @Test("cancelAll(tagged:) cancels the transfers and exchanges with that tag, and only those")
    func taggedTransfersAndExchanges() async throws {
        let (client, mock) = Fixtures.client()
        let gate = JobFixtures.Gate()
        var arrivals = gate.arrivals.makeAsyncIterator()
        mock.stub(.get, "/probe") { request in
            let id = request.head.headerFields[HTTPField.Name("X-Id")!] ?? "?"
            guard await gate.enter(id) else { throw CancellationError() }
            return .text("done \(id)")
        }
        func probe(_ id: String) -> Probe<String> {
            var probe = Probe<String>()
            probe.headers = ["X-Id": id]
            return probe
        }
        let upload = client.transfer(probe("upload"), tags: ["screen"])
        let other = client.transfer(probe("other"))
        let exchange = Task { try await client.exchange(for: probe("exchange"), tags: ["screen"]) }
        #expect(Set(await JobFixtures.waitFor(3, on: &arrivals)) == ["upload", "other", "exchange"])
        #expect(client.cancelAll(tagged: "screen") == 2)
        await #expect(throws: CancellationError.self) { try await upload.value }
        await #expect(throws: CancellationError.self) { try await exchange.value }
        #expect(gate.parked == ["other"])
        gate.release("other")
        #expect(try await other.value == "done other")
    }

    @Test("cancelAll(tagged:) right after transfer() returns cancels it, before its task has run; nothing is sent")
    func cancelAllRightAfterTransfer() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .text("sent"))
        let transfer = client.transfer(Probe<String>(), tags: ["screen"])
        #expect(client.callsInFlight == 1)
        #expect(client.cancelAll(tagged: "screen") == 1)
        await #expect(throws: CancellationError.self) { try await transfer.value }
        for await _ in transfer.progress {}
        #expect(mock.recordedRequests.isEmpty)
        #expect(client.callsInFlight == 0)
    }

    @Test("cancelAll() right after send(_:completion:) returns cancels it; the completion gets CancellationError")
    func cancelAllRightAfterSendWithCompletion() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .text("sent"))
        let (results, continuation) = AsyncStream<Result<String, any Error>>.makeStream()
        let handle = client.send(Probe<String>()) { continuation.yield($0) }
        #expect(client.cancelAll() == 1)
        var iterator = results.makeAsyncIterator()
        let result = await iterator.next()
        guard case .failure(let error)? = result else {
            Issue.record(
                "the call ran although cancelAll() came before its task started: \(String(describing: result))")
            return
        }
        #expect(error is CancellationError)
        await handle.wait()
        #expect(mock.recordedRequests.isEmpty)
        #expect(client.callsInFlight == 0)
    }

    @Test("cancelling the task that awaits a transfer's value cancels the call, as it does a send")
    func cancellingTheAwaiterCancelsTheTransfer() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .status(200, fault: .stall))
        let transfer = client.transfer(Probe<String>())
        let waiter = Task { try await transfer.value }
        waiter.cancel()
        let outcome = await withTaskGroup(of: Result<String, any Error>?.self) { group in
            group.addTask { await waiter.result }
            group.addTask {
                // A bound on the test, not a synchronisation: the call ends as soon as the cancellation reaches it.
                // Past the bound, the transfer itself is cancelled, so that the waiter (whose wait for an unstructured
                // task's result no group cancellation reaches) ends and the group with it.
                try? await Task.sleep(for: .seconds(10))
                transfer.cancel()
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard case .failure(let error)? = outcome else {
            Issue.record("the awaiting task, cancelled, still waited for the stalled call (or got a value)")
            return
        }
        #expect(error is CancellationError)
        for await _ in transfer.progress {}  // the call itself ended: its progress finishes
    }
}
