import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("README: jobs")
struct ReadmeJobsSampleTests {
    struct Secret: Decodable, Sendable { let id: String }
    struct Token: Decodable, Sendable { let value: String }
    struct User: Decodable, Sendable, Equatable { let id: Int }
    struct Session: Sendable { let secret: Secret, token: Token }
    struct FetchClientSecret: Request {
        typealias Response = Secret
        let email: String, password: String
        var method: HTTPRequest.Method { .post }
        var path: String { "/client-secret" }
    }
    struct FetchToken: Request {
        typealias Response = Token
        let secret: Secret
        var method: HTTPRequest.Method { .post }
        var path: String { "/token/\(pathSegment: secret.id)" }
    }
    struct GetUser: Request {
        typealias Response = User
        let id: Int
        var path: String { "/users/\(id)" }
    }
    struct ListUsers: Request {
        typealias Response = [User]
        var path: String { "/users" }
    }

    // readme-jobs:begin
    struct LoginJob: Job {
        let email: String, password: String

        func run(on client: Client) async throws -> Session {
            let secret = try await client.send(FetchClientSecret(email: email, password: password))
            let token = try await client.send(FetchToken(secret: secret))  // uses the first step's result
            return Session(secret: secret, token: token)
        }
    }

    func sample(client: Client, email: String, password: String) async throws -> (Session, [User], [User]) {
        let session = try await client.run(LoginJob(email: email, password: password), tags: ["login"])
        let users = try await client.sendAll([1, 2, 3].map(GetUser.init), maxConcurrent: 2)  // input order, fail fast
        let results = await client.sendAllResults([4, 5].map(GetUser.init), maxConcurrent: 2)  // every Result
        client.cancelAll(tagged: "login")  // or client.cancelAll(), or cancel the Task
        var listed: [User] = []
        for try await page in client.pages(of: ListUsers(), next: .link()) { listed += page.value }  // Link: rel="next"
        // readme-jobs:end
        #expect(results.count == 2)
        return (session, users, listed)
    }

    @Test("the README's jobs sample compiles and runs")
    func sampleRuns() async throws {
        let mock = MockTransport()
        mock.stub(.post, "/client-secret", with: .json(raw: #"{"id":"c1"}"#))
        mock.stub(.post, "/token/c1", with: .json(raw: #"{"value":"t1"}"#))
        for id in 1...5 { mock.stub(.get, "/users/\(id)", with: .json(raw: #"{"id":\#(id)}"#)) }
        mock.stub(
            .get, "/users",
            with: [
                .json(raw: #"[{"id":1}]"#, headerFields: [HTTPField.Name("Link")!: "</users?page=2>; rel=\"next\""]),
                .json(raw: #"[{"id":2}]"#),
            ])
        let client = Client(server: Server(baseURL: URL(string: "https://api.example.com")!), transport: mock)
        let (session, users, listed) = try await sample(client: client, email: "a", password: "b")
        #expect(session.token.value == "t1")
        #expect(users == [User(id: 1), User(id: 2), User(id: 3)])
        #expect(listed == [User(id: 1), User(id: 2)])
    }

    @Test("the README shows the same code as this test")
    func readmeMatchesThisFile() throws {
        let (readmeLines, source) = try ReadmeSampleTests.readmeAndSource(marker: "jobs", testFile: #filePath)
        let sourceLines = source.filter { !$0.hasPrefix("func sample") }
        #expect(readmeLines == sourceLines)
    }
}
