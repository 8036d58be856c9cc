import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("FileCredentialStore", .timeLimit(.minutes(1)))
struct FileCredentialStoreTests {
    typealias F = AuthFixtures

    /// A fresh directory (not yet created) under the temporary directory.
    private static func scratchDirectory() -> URL {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-auth-\(UUID().uuidString)", isDirectory: true)
            .appendingPathComponent("nested", isDirectory: true)
    }

    private static func mode(of url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return try #require(attributes[.posixPermissions] as? Int)
    }

    @Test("saves atomically with mode 0600, creating the directory, and loads what it saved")
    func roundTrip() async throws {
        let directory = Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let url = directory.appendingPathComponent("credential.json")
        let store = FileCredentialStore(url: url)
        var credential = F.signedIn()
        credential.version = 3

        #expect(try await store.load() == nil)
        try await store.save(credential)
        try await store.save(credential)

        #expect(try await store.load() == credential)
        #expect(try Self.mode(of: url) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["credential.json"])
        try await store.clear()
        try await store.clear()
        #expect(try await store.load() == nil)
    }

    @Test("clear removes a crashed save's temporary file (it holds tokens) but not a save in progress")
    func clearRemovesLeftovers() async throws {
        let directory = Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let url = directory.appendingPathComponent("credential.json")
        let store = FileCredentialStore(url: url)
        try await store.save(F.signedIn())
        let manager = FileManager.default
        let crashed = directory.appendingPathComponent(".credential.json.\(UUID().uuidString).tmp")
        let inProgress = directory.appendingPathComponent(".credential.json.\(UUID().uuidString).tmp")
        let unrelated = directory.appendingPathComponent(".other.json.\(UUID().uuidString).tmp")
        for file in [crashed, inProgress, unrelated] {
            try Data(#"{"accessToken":"access-1","refreshToken":"refresh-1"}"#.utf8).write(to: file)
        }
        let old = Date().addingTimeInterval(-120)
        try manager.setAttributes([.modificationDate: old], ofItemAtPath: crashed.path)
        try manager.setAttributes([.modificationDate: old], ofItemAtPath: unrelated.path)

        try await store.clear()

        let left = try Set(manager.contentsOfDirectory(atPath: directory.path))
        #expect(left == [inProgress.lastPathComponent, unrelated.lastPathComponent])
    }

    @Test(
        "a corrupt file fails load with credentialStoreFailed, quoting nothing from it",
        arguments: [
            "{not json access-1", #"{"refreshToken":"refresh-1"}"#, #"{"accessToken":42}"#, "",
            #"{"accessToken":"access-1","version":9223372036854775807}"#, #"{"accessToken":"access-1","version":-1}"#,
        ]
    )
    func corruptFile(content: String) async throws {
        let directory = Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent("credential.json")
        try Data(content.utf8).write(to: url)

        let error = await expectCourierError { try await FileCredentialStore(url: url).load() }

        #expect(error?.code == .credentialStoreFailed)
        let description = try #require(error?.description)
        #expect(!F.secrets.contains { description.contains($0) })
    }

    @Test("row 35: a corrupt credential file fails a request with a typed error, not a crash")
    func corruptFileThroughTheClient() async throws {
        let directory = Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent("credential.json")
        try Data("garbage".utf8).write(to: url)
        let harness = try await F.harness(store: FileCredentialStore(url: url), signIn: nil)
        F.stubAPI(harness.mock, accepting: { "access-1" })

        let error = await expectCourierError { try await harness.client.send(Probe()) }

        #expect(error?.code == .credentialStoreFailed)
        #expect(error?.stage == .adapt)
        #expect(harness.mock.recordedRequests.isEmpty)
    }

    @Test("row 35: the rotated refresh token is on disk before the replayed request is sent")
    func rotatedRefreshTokenIsPersistedFirst() async throws {
        let directory = Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let url = directory.appendingPathComponent("credential.json")
        let harness = try await F.harness(store: FileCredentialStore(url: url))
        F.stubTokenEndpoint(harness.mock)
        let seenOnDisk = F.Shared<Credential?>(nil)
        harness.mock.stub(nil, "/probe") { request in
            guard request.head.headerFields[.authorization] == "Bearer access-2" else { return F.invalidToken }
            let onDisk = try? JSONDecoder().decode(Credential.self, from: Data(contentsOf: url))
            seenOnDisk.update { $0 = onDisk }
            return .text("ok")
        }

        #expect(try await harness.client.send(Probe()) == "ok")

        #expect(seenOnDisk.value?.refreshToken == "refresh-2")
        #expect(seenOnDisk.value?.accessToken == "access-2")
        #expect(seenOnDisk.value?.version == 2)
        #expect(try Self.mode(of: url) == 0o600)
        // A new authenticator on the same file (the app relaunched) continues with the rotated token.
        let relaunched = Authenticator(store: FileCredentialStore(url: url), refresher: F.ScriptedRefresher())
        #expect(try await relaunched.currentCredential()?.refreshToken == "refresh-2")
    }
}
