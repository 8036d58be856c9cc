import Courier
import Foundation
import HTTPTypes

// Scenario 10: a grouped job and the Philly talk's chained LoginJob.

/// One item of the group; the server says how many item calls were in flight when this one arrived.
struct GetJobItem: Request {
    struct Response: Decodable, Sendable {
        let number: Int
        let inFlight: Int
    }
    let number: Int
    var path: String { "/jobs/item" }
    var query: Parameters? { ["n": "\(number)"] }
}

struct ClientSecret: Decodable, Sendable {
    let id: String
    let secret: String
}

struct FetchClientSecret: Request {
    typealias Response = ClientSecret
    let email: String
    let password: String
    var method: HTTPRequest.Method { .post }
    var path: String { "/jobs/client-secret" }
    var body: RequestBody? { .json(["email": email, "password": password]) }
    var decisions: [any Decision] { [.validateStatus(decoding: APIError.self)] }
}

struct FetchAccessToken: Request {
    struct Response: Decodable, Sendable {
        let accessToken: String
        enum CodingKeys: String, CodingKey { case accessToken = "access_token" }
    }
    let secret: ClientSecret
    let email: String
    let password: String
    var method: HTTPRequest.Method { .post }
    var path: String { "/jobs/token" }
    var body: RequestBody? {
        .form([
            "grant_type": "password", "client_id": secret.id, "client_secret": secret.secret,
            "username": email, "password": password,
        ])
    }
}

struct FetchSessionProfile: Request {
    typealias Response = Profile
    let accessToken: String
    var path: String { "/jobs/me" }
    var headers: RequestHeaders { ["Authorization": "Bearer \(accessToken)"] }
}

/// The talk's session: the client secret, the token, and who signed in.
struct LoginSession: Sendable {
    let clientSecret: ClientSecret
    let accessToken: String
    let profile: Profile
}

/// The talk's `LoginJob`: client secret → token → session, each step using the one before.
struct LoginJob: Job {
    let email: String
    let password: String

    func run(on client: Client) async throws -> LoginSession {
        let secret = try await client.send(FetchClientSecret(email: email, password: password))
        let token = try await client.send(FetchAccessToken(secret: secret, email: email, password: password))
        let profile = try await client.send(FetchSessionProfile(accessToken: token.accessToken))
        return LoginSession(clientSecret: secret, accessToken: token.accessToken, profile: profile)
    }
}

extension Scenarios {
    static let jobs = Scenario(
        number: 10,
        title: "A grouped job (10 requests, concurrency 3) and a chained login job",
        runsAgainstExternalTarget: false
    ) { demo in
        let client = demo.client()
        let requests = (1...10).map(GetJobItem.init)
        demo.terminal.detail("group: GET /jobs/item?n=1 … n=10, at most 3 at a time")
        let items = try await client.sendAll(requests, maxConcurrent: 3)
        let observed = items.map(\.inFlight).max() ?? 0
        demo.terminal.detail("results in order: \(items.map(\.number))")
        demo.terminal.detail("most calls in flight at the server: \(observed)")
        let grouped =
            check(items.map(\.number) == Array(1...10), "ten responses, in input order", terminal: demo.terminal)
            & check(
                (2...3).contains(observed), "ran in parallel, never more than 3 at once (saw \(observed))",
                terminal: demo.terminal)

        demo.terminal.detail("chain: POST /jobs/client-secret → POST /jobs/token → GET /jobs/me")
        let session = try await client.run(LoginJob(email: "ada@example.com", password: "correct horse"))
        demo.terminal.detail(
            "session: client \(session.clientSecret.id), token \(session.accessToken), user \(session.profile.name ?? "?")"
        )
        let chained = check(
            session.profile.name == "Ada" && session.accessToken == "job-token-1",
            "the login job chained three steps into a session", terminal: demo.terminal)

        let failed: Bool
        do {
            _ = try await client.run(LoginJob(email: "mallory@example.com", password: "guess"))
            failed = false
        } catch {
            demo.terminal.detail("a wrong login, for the user: \"\(ErrorMessageProvider().message(for: error))\"")
            failed =
                (error as? CourierError)?.response?.status.code == 401
                && ErrorMessageProvider().message(for: error) == "Unknown user."
        }
        return grouped & chained
            & check(
                failed, "a failing first step fails the job with its 401 and the server's reason",
                terminal: demo.terminal)
            & check(client.callsInFlight == 0, "nothing left in flight", terminal: demo.terminal)
    }
}
