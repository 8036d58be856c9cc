import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("README")
struct ReadmeSampleTests {
    // readme-sample:begin
    struct HTTPBinPost: Request {
        struct Response: Decodable, Sendable {
            struct Form: Decodable, Sendable { let foo: String }
            let form: Form
        }
        var method: HTTPRequest.Method { .post }
        var path: String { "/post" }
        var body: RequestBody? { .form(["foo": foo]) }
        let foo: String
    }

    func sample() async throws -> (HTTPBinPost.Response, RequestTask) {
        let transport = MockTransport()
        transport.stub(.post, "/post", with: .json(raw: #"{"form":{"foo":"bar"}}"#))
        let client = Client(server: Server(baseURL: URL(string: "https://httpbin.org")!), transport: transport)
        let value = try await client.send(HTTPBinPost(foo: "bar"))  // value.form.foo == "bar"
        let task = client.send(HTTPBinPost(foo: "bar")) { result in print(result) }  // completion form, cancellable
        return (value, task)
    }
    // readme-sample:end

    func authSample(plainClient: Client, credentialsURL: URL, access: String, refresh: String, expiry: Date)
        async throws -> Client
    {
        // readme-auth:begin
        let authenticator = Authenticator(
            store: FileCredentialStore(url: credentialsURL),  // or InMemoryCredentialStore(), KeychainCredentialStore
            refresher: OAuth2RefreshTokenRefresher(client: plainClient, path: "/oauth/token", clientID: "my-app")
        )
        try await authenticator.signIn(Credential(accessToken: access, refreshToken: refresh, expiresAt: expiry))
        let client = plainClient.configured { $0.authenticate(with: authenticator) }  // adapter + refresh decision
        // readme-auth:end
        return client
    }

    @Test("the README's authentication sample compiles, matches, and signs requests")
    func authSampleRuns() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/me") { request in .text(request.head.headerFields[.authorization] ?? "none") }
        let plain = Client(server: Server(baseURL: URL(string: "https://api.example.com")!), transport: mock)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-readme-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: file) }
        let client = try await authSample(
            plainClient: plain,
            credentialsURL: file,
            access: "a1",
            refresh: "r1",
            expiry: Date().addingTimeInterval(3600)
        )
        #expect(try await client.send(Probe(path: "/me")) == "Bearer a1")

        let testFile = URL(fileURLWithPath: #filePath)
        let root = testFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: testFile, encoding: .utf8)
        let readmeLines = try Self.lines(
            between: "<!-- readme-auth:begin -->", and: "<!-- readme-auth:end -->", in: readme
        )
        .filter { !$0.hasPrefix("```") }
        let sourceLines = try Self.lines(between: "// readme-auth:begin", and: "// readme-auth:end", in: source)
        #expect(readmeLines == sourceLines)
    }

    struct UploadPhoto: Request {
        typealias Response = Data
        var method: HTTPRequest.Method { .post }
        var path: String { "/photos" }
        var body: RequestBody? {
            .multipart([.field(name: "title", value: "Holiday"), .file(name: "photo", fileURL: photoURL)])
        }
        let photoURL: URL
    }

    struct DownloadVideo: Request {
        typealias Response = DownloadedFile
        var path: String { "/videos/42" }
        var parser: any ResponseParser<DownloadedFile> { DownloadParser(destination: destination) }
        let destination: URL
    }

    func transferSample(client: Client, photoURL: URL, videoURL: URL) async throws -> [TransferProgress] {
        var seen: [TransferProgress] = []
        // readme-transfer:begin
        let upload = client.transfer(UploadPhoto(photoURL: photoURL))  // streamed from disk, exact Content-Length
        for await progress in upload.progress { print(progress) }  // e.g. "upload 1048576/2097152 B"
        _ = try await upload.value
        let file = try await client.send(DownloadVideo(destination: videoURL))  // written as it arrives
        print(file.url, file.byteCount)
        // readme-transfer:end
        for await progress in client.transfer(UploadPhoto(photoURL: photoURL)).progress { seen.append(progress) }
        return seen
    }

    @Test("the README's upload and download sample compiles, matches, and reports progress")
    func transferSampleRuns() async throws {
        let mock = MockTransport()
        mock.stub(.post, "/photos") { request in
            .text(request.bodyText?.contains("name=\"photo\"; filename=\"photo.jpg\"") == true ? "ok" : "missing")
        }
        mock.stub(.get, "/videos/42") { _ in .data(Data(repeating: 7, count: 4096)) }
        let client = Client(server: Server(baseURL: URL(string: "https://api.example.com")!), transport: mock)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-readme-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let photo = directory.appendingPathComponent("photo.jpg")
        try Data(repeating: 1, count: 100_000).write(to: photo)
        let seen = try await transferSample(
            client: client, photoURL: photo, videoURL: directory.appendingPathComponent("video.bin"))
        let lastUpload = try #require(seen.last { $0.direction == .upload })
        #expect(lastUpload.totalBytes.map { $0 > 100_000 } == true)  // the file plus the multipart framing
        #expect(lastUpload.completedBytes == lastUpload.totalBytes)
        let video = try Data(contentsOf: directory.appendingPathComponent("video.bin"))
        #expect(video.count == 4096)

        let testFile = URL(fileURLWithPath: #filePath)
        let root = testFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: testFile, encoding: .utf8)
        let readmeLines = try Self.lines(
            between: "<!-- readme-transfer:begin -->", and: "<!-- readme-transfer:end -->", in: readme
        )
        .filter { !$0.hasPrefix("```") }
        let sourceLines = try Self.lines(between: "// readme-transfer:begin", and: "// readme-transfer:end", in: source)
        #expect(readmeLines == sourceLines)
    }

    @Test("the README sample compiles and behaves as its comments say")
    func sampleRuns() async throws {
        let (value, task) = try await sample()
        #expect(value.form.foo == "bar")
        await task.wait()
    }

    @Test("the README shows the same code as this test")
    func readmeMatchesThisFile() throws {
        let testFile = URL(fileURLWithPath: #filePath)
        let root = testFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: testFile, encoding: .utf8)
        let readmeLines = try Self.lines(
            between: "<!-- readme-sample:begin -->", and: "<!-- readme-sample:end -->", in: readme
        )
        .filter { !$0.hasPrefix("```") }
        let sourceLines = try Self.lines(between: "// readme-sample:begin", and: "// readme-sample:end", in: source)
            .filter { !$0.hasPrefix("func sample") && !$0.hasPrefix("return (value") }
            .dropLast()  // the closing brace of `sample()`
        #expect(readmeLines == Array(sourceLines))
    }

    /// The README's block `readme-<marker>` and the lines between `// readme-<marker>:begin` and `…:end` in
    /// `testFile` (a file two folders below `Tests/`), each as its non-empty, unindented lines.
    static func readmeAndSource(marker: String, testFile: String) throws -> (readme: [String], source: [String]) {
        let file = URL(fileURLWithPath: testFile)
        let root = file.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: file, encoding: .utf8)
        let readmeLines = try lines(
            between: "<!-- readme-\(marker):begin -->", and: "<!-- readme-\(marker):end -->", in: readme
        )
        .filter { !$0.hasPrefix("```") }
        let sourceLines = try lines(between: "// readme-\(marker):begin", and: "// readme-\(marker):end", in: source)
        return (readmeLines, sourceLines)
    }

    /// The non-empty lines between two markers, with leading indentation of the block removed.
    static func lines(between begin: String, and end: String, in text: String) throws -> [String] {
        let all = text.components(separatedBy: "\n")
        let start = try #require(all.firstIndex { $0.contains(begin) })
        let stop = try #require(all.firstIndex { $0.contains(end) })
        let block = all[(start + 1)..<stop].filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        return block.map { $0.trimmingCharacters(in: .whitespaces) }
    }
}
