import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

// The Philly talk's login: client secret → token → session.
private struct ClientSecret: Decodable, Sendable, Equatable {
    let id: String
    let secret: String
}

private struct AccessToken: Decodable, Sendable, Equatable {
    let value: String
}

private struct Session: Sendable, Equatable {
    let clientSecret: ClientSecret
    let accessToken: AccessToken
}

private struct FetchClientSecret: Request {
    typealias Response = ClientSecret
    let email: String
    let password: String
    var method: HTTPRequest.Method { .post }
    var path: String { "/users/retrieve-client" }
    var body: RequestBody? { .json(["email": email, "password": password]) }
}

private struct FetchToken: Request {
    typealias Response = AccessToken
    let secret: ClientSecret
    let email: String
    let password: String
    var method: HTTPRequest.Method { .post }
    var path: String { "/oauth/token" }
    var body: RequestBody? {
        .form([
            "grant_type": "password", "client_id": secret.id, "client_secret": secret.secret, "username": email,
            "password": password,
        ])
    }
}

private struct LoginJob: Job {
    let email: String
    let password: String

    func run(on client: Client) async throws -> Session {
        let secret = try await client.send(FetchClientSecret(email: email, password: password))
        let token = try await client.send(FetchToken(secret: secret, email: email, password: password))
        return Session(clientSecret: secret, accessToken: token)
    }
}

@Suite("Jobs: chained requests", .timeLimit(.minutes(1)))
struct JobTests {
    @Test("a chained job returns its typed result, and each step uses the one before")
    func chainedLogin() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.post, "/users/retrieve-client", with: .json(raw: #"{"id":"c-1","secret":"s-1"}"#))
        mock.stub(.post, "/oauth/token", with: .json(raw: #"{"value":"token-1"}"#))
        let session = try await client.run(LoginJob(email: "ada@example.com", password: "pw"))
        #expect(
            session
                == Session(clientSecret: ClientSecret(id: "c-1", secret: "s-1"), accessToken: .init(value: "token-1")))
        let sent = mock.recordedRequests
        #expect(sent.map(\.pathWithoutQuery) == ["/users/retrieve-client", "/oauth/token"])
        let form = try #require(sent.last?.bodyText)
        #expect(form.contains("client_id=c-1") && form.contains("client_secret=s-1"))
        #expect(client.callsInFlight == 0)
    }

    @Test("a failed step fails the job with its error, and later steps are not sent")
    func failedStep() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.post, "/users/retrieve-client", with: .status(403))
        let error = try #require(await expectCourierError { try await client.run(LoginJob(email: "a", password: "b")) })
        #expect(error.code == .unacceptableStatus && error.response?.status.code == 403)
        #expect(mock.recordedRequests.count == 1)
        #expect(client.callsInFlight == 0)
    }

    @Test(
        "cancelling a job cancels the step in flight: by task, by tag, and by cancelAll",
        arguments: ["task", "tag", "all"])
    func cancelJob(how: String) async throws {
        let (client, mock) = Fixtures.client()
        let gate = JobFixtures.Gate()
        var arrivals = gate.arrivals.makeAsyncIterator()
        mock.stub(.post, "/users/retrieve-client", with: .json(raw: #"{"id":"c-1","secret":"s-1"}"#))
        mock.stub(.post, "/oauth/token") { _ in
            guard await gate.enter("token") else { throw CancellationError() }
            return .json(raw: #"{"value":"token-1"}"#)
        }
        let job = Task { try await client.run(LoginJob(email: "a", password: "b"), tags: ["login"]) }
        #expect(await JobFixtures.waitFor(1, on: &arrivals) == ["token"])
        #expect(client.callsInFlight == 2)  // the job and its step
        switch how {
        case "task": job.cancel()
        case "tag": #expect(client.cancelAll(tagged: "login") == 1)
        default: #expect(client.cancelAll() == 2)
        }
        await #expect(throws: CancellationError.self) { try await job.value }
        #expect(gate.parked.isEmpty)
        #expect(client.callsInFlight == 0)
    }

    @Test("a job run on a derived client is cancelled by the original client's cancelAll")
    func derivedClientsShareTheRegistry() async throws {
        let (client, mock) = Fixtures.client()
        let gate = JobFixtures.Gate()
        var arrivals = gate.arrivals.makeAsyncIterator()
        mock.stub(.get, "/slow") { _ in
            guard await gate.enter("slow") else { throw CancellationError() }
            return .text("late")
        }
        let derived = client.configured { $0.timeout = .seconds(600) }.switching(to: .production)
        let call = Task { try await derived.send(Probe(path: "/slow")) }
        _ = await JobFixtures.waitFor(1, on: &arrivals)
        #expect(client.callsInFlight == 1)
        #expect(client.cancelAll() == 1)
        await #expect(throws: CancellationError.self) { try await call.value }
        #expect(derived.callsInFlight == 0)
    }

    @Test("cancelAll(tagged:) cancels only the calls with that tag")
    func cancelByTagOnly() async throws {
        let gate = JobFixtures.Gate()
        let (tagged, mock) = JobFixtures.gatedClient(gate)
        var arrivals = gate.arrivals.makeAsyncIterator()
        let screen = Task { try await tagged.send(JobFixtures.item(1), tags: ["screen", "other"]) }
        let keep = Task { try await tagged.send(JobFixtures.item(2), tags: ["background"]) }
        _ = await JobFixtures.waitFor(2, on: &arrivals)
        #expect(tagged.cancelAll(tagged: "screen") == 1)
        await #expect(throws: CancellationError.self) { try await screen.value }
        gate.release("2")
        #expect(try await keep.value == "item 2")
        #expect(tagged.callsInFlight == 0)
        #expect(mock.recordedRequests.count == 2)
    }

    @Test("a call's cancellation handler may cancel other calls: no handler runs under the registry's lock")
    func cancellationHandlerCancelsOtherCalls() async throws {
        let (client, mock) = Fixtures.client()
        let gate = JobFixtures.Gate()
        var arrivals = gate.arrivals.makeAsyncIterator()
        mock.stub(.get, "/first") { _ in
            // Cancelling this call runs the handler synchronously, inside `cancelAll(tagged: "first")`.
            let entered = await withTaskCancellationHandler {
                await gate.enter("first")
            } onCancel: {
                client.cancelAll(tagged: "second")
            }
            guard entered else { throw CancellationError() }
            return .text("first")
        }
        mock.stub(.get, "/second") { _ in
            guard await gate.enter("second") else { throw CancellationError() }
            return .text("second")
        }
        let first = Task { try await client.send(Probe(path: "/first"), tags: ["first"]) }
        let second = Task { try await client.send(Probe(path: "/second"), tags: ["second"]) }
        _ = await JobFixtures.waitFor(2, on: &arrivals)
        #expect(client.cancelAll(tagged: "first") == 1)
        await #expect(throws: CancellationError.self) { try await first.value }
        await #expect(throws: CancellationError.self) { try await second.value }
        #expect(gate.parked.isEmpty)
        #expect(client.callsInFlight == 0)
    }

    @Test("cancelAll does not affect calls started after it")
    func cancelAllIsNotSticky() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/after", with: .text("fine"))
        #expect(client.cancelAll() == 0)
        #expect(try await client.send(Probe(path: "/after")) == "fine")
    }
}
