import Courier
import CourierTesting
import Foundation
import HTTPTypes

// The seeds' requests, in Courier.

struct Echo: Decodable, Sendable {
    let args: [String: String]?
    let form: [String: String]?
    let json: [String: String]?
    let url: String?
}

struct HTTPBinGet: Request {
    typealias Response = Echo
    var path: String { "/get" }
    var query: Parameters? { ["foo": foo] }
    let foo: String
}

struct HTTPBinPost: Request {
    typealias Response = Echo
    var method: HTTPRequest.Method { .post }
    var path: String { "/post" }
    var body: RequestBody? { .form(["foo": foo]) }
    let foo: String
}

struct HTTPBinPostJSON: Request {
    typealias Response = Echo
    var method: HTTPRequest.Method { .post }
    var path: String { "/post" }
    var body: RequestBody? { .json(["foo": foo]) }
    let foo: String
}

/// The API's error body: `{"code":403,"reason":"Invalid Token."}`.
struct APIError: Decodable, Error, UserPresentableError {
    let code: Int
    let reason: String
    var userMessage: String? { reason }
}

struct Profile: Decodable, Sendable {
    let name: String?
    let email: String?
}

struct GetProfile: Request {
    typealias Response = Profile
    var path: String { "/api/profile" }
    var decisions: [any Decision] { [.validateStatus(decoding: APIError.self)] }
}

struct GetMe: Request {
    typealias Response = Profile
    var path: String { "/api/me" }
    var authentication: AuthenticationRequirement { .required }
}

struct GetRefreshCount: Request {
    typealias Response = String
    var path: String { "/api/refreshes" }
}

struct GetFlaky: Request {
    typealias Response = String
    var path: String { "/flaky" }
}

struct GetEmptyProfile: Request {
    typealias Response = Profile
    var path: String { "/api/empty" }
    var decisions: [any Decision] { [.validateStatus(), .mapEmptyBody()] }
}

/// A request to an endpoint the server hasn't built yet, answered with dummy data (the seeds' `SERVER_NOT_READY`):
/// the decision finishes the chain with a made-up 200, so validation never sees the 501.
struct GetUnreadyProfile: Request {
    typealias Response = Profile
    var path: String { "/status/501" }
    var decisions: [any Decision] {
        [
            .custom("dummyData") { _, _ in
                .done(
                    with: ReceivedResponse(head: HTTPResponse(status: .ok), body: Data(#"{"name":"Dummy User"}"#.utf8)))
            },
            .validateStatus(),
        ]
    }
}

struct Download: Request {
    typealias Response = DownloadedFile
    let bytes: Int
    let destination: URL
    var path: String { "/stream-bytes/\(bytes)" }
    var parser: any ResponseParser<DownloadedFile> { DownloadParser(destination: destination) }
}

/// A multipart upload: a field and a file streamed from disk.
struct Upload: Request {
    struct Response: Decodable, Sendable {
        let form: [String: String]
        let files: [String: String]
    }
    let file: URL
    var method: HTTPRequest.Method { .post }
    var path: String { "/post" }
    var body: RequestBody? { .multipart([.field(name: "title", value: "demo"), .file(name: "file", fileURL: file)]) }
}

enum Scenarios {
    static let all: [Scenario] = [
        basics, apiError, tokenRefresh, retry, emptyBody, environments, mock, cache, transfers, jobs, streaming,
    ]

    static let basics = Scenario(
        number: 1,
        title: "GET with a query, POST as form, POST as JSON",
        runsAgainstExternalTarget: true
    ) { demo in
        let client = demo.client()
        let get = try await client.send(HTTPBinGet(foo: "bar"))
        let form = try await client.send(HTTPBinPost(foo: "bar"))
        let json = try await client.send(HTTPBinPostJSON(foo: "bar"))
        return check(get.args?["foo"] == "bar", "args.foo == \"bar\"", terminal: demo.terminal)
            & check(form.form?["foo"] == "bar", "form.foo == \"bar\"", terminal: demo.terminal)
            & check(json.json?["foo"] == "bar", "json.foo == \"bar\"", terminal: demo.terminal)
    }

    static let apiError = Scenario(
        number: 2,
        title: "A typed API error, in words for the user",
        runsAgainstExternalTarget: false
    ) { demo in
        do {
            _ = try await demo.client().send(GetProfile())
            return check(false, "the call should have failed", terminal: demo.terminal)
        } catch let error as CourierError {
            let apiError = error.underlyingError as? APIError
            let sentence = ErrorMessageProvider().message(for: error)
            demo.terminal.detail(
                "error: \(error.code), API error: \(apiError.map { "\($0.code) \($0.reason)" } ?? "none")")
            demo.terminal.detail("for the user: \"\(sentence)\"")
            return check(apiError?.code == 403, "decoded APIError(code: 403)", terminal: demo.terminal)
                & check(sentence == "Invalid Token.", "the sentence is the server's reason", terminal: demo.terminal)
        }
    }

    static let tokenRefresh = Scenario(
        number: 3,
        title: "Token refresh: an expired token, ten concurrent calls, one refresh",
        runsAgainstExternalTarget: false
    ) { demo in
        let plain = demo.client()
        let authenticator = Authenticator(
            refresher: OAuth2RefreshTokenRefresher(client: plain, path: "/oauth/token", clientID: "courier-demo")
        )
        _ = try await authenticator.signIn(Credential(accessToken: "access-expired", refreshToken: "refresh-1"))
        let client = demo.client { $0.authenticate(with: authenticator) }
        let profiles = try await withThrowingTaskGroup(of: Profile.self) { group in
            for _ in 0..<10 { group.addTask { try await client.send(GetMe()) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let refreshes = try await plain.send(GetRefreshCount())
        return check(
            profiles.count == 10 && profiles.allSatisfy { $0.name == "Ada" },
            "ten concurrent calls with an expired token all succeeded",
            terminal: demo.terminal
        )
            & check(
                refreshes == "1", "they shared one refresh (token endpoint calls: \(refreshes))",
                terminal: demo.terminal)
    }

    static let retry = Scenario(
        number: 4,
        title: "Retry: 503 with Retry-After: 1, then 200",
        runsAgainstExternalTarget: false
    ) { demo in
        let start = ContinuousClock.now
        let value = try await demo.client().send(GetFlaky())
        let waited = ContinuousClock.now - start
        demo.terminal.detail("waited \(waited.formatted(.units(allowed: [.seconds, .milliseconds], width: .narrow)))")
        return check(value == "recovered", "the second attempt succeeded", terminal: demo.terminal)
            & check(waited >= .seconds(1), "waited at least the Retry-After second", terminal: demo.terminal)
    }

    static let emptyBody = Scenario(
        number: 5,
        title: "An empty body mapped to {}, and dummy data for a server that isn't ready",
        runsAgainstExternalTarget: false
    ) { demo in
        let client = demo.client()
        let empty = try await client.send(GetEmptyProfile())
        let dummy = try await client.send(GetUnreadyProfile())
        return check(
            empty.name == nil && empty.email == nil, "an empty 200 decoded as an empty Profile", terminal: demo.terminal
        )
            & check(dummy.name == "Dummy User", "the 501 was replaced by dummy data", terminal: demo.terminal)
    }

    static let environments = Scenario(
        number: 6,
        title: "Environments: production and staging, switched per client and per request",
        runsAgainstExternalTarget: false
    ) { demo in
        let production = Server(baseURL: demo.production, environment: .production)
        let staging = Server(baseURL: demo.staging, environment: .staging)
        let client = Client(
            servers: [production, staging],
            environment: .production,
            transport: demo.makeTransport(),
            configuration: Client.Configuration(logger: demo.terminal.logger(verbose: demo.verbose))
        )
        struct Where: Request {
            typealias Response = Echo
            var path: String { "/get" }
            var environment: Server.Environment?
        }
        let fromProduction = try await client.send(Where())
        let fromStaging = try await client.switching(to: .staging).send(Where())
        let perRequest = try await client.send(Where(environment: .staging))
        let port = { (url: URL) in url.port.map(String.init) ?? "" }
        return check(
            fromProduction.url?.contains(port(demo.production)) == true, "production by default",
            terminal: demo.terminal)
            & check(
                fromStaging.url?.contains(port(demo.staging)) == true, "staging after switching(to:)",
                terminal: demo.terminal)
            & check(
                perRequest.url?.contains(port(demo.staging)) == true, "staging for one request", terminal: demo.terminal
            )
    }

    static let mock = Scenario(
        number: 7,
        title: "The same request answered by MockTransport, no network",
        runsAgainstExternalTarget: true
    ) { demo in
        let mock = MockTransport()
        mock.stub(.get, "/get", with: .json(raw: #"{"args":{"foo":"mocked"}}"#))
        let client = Client(
            server: Server(baseURL: URL(string: "https://api.example.com")!),
            transport: mock,
            configuration: Client.Configuration(logger: demo.terminal.logger(verbose: demo.verbose))
        )
        let echo = try await client.send(HTTPBinGet(foo: "bar"))
        let sent = mock.recordedRequests.first?.head.path ?? ""
        return check(echo.args?["foo"] == "mocked", "the stub answered", terminal: demo.terminal)
            & check(sent == "/get?foo=bar", "the mock recorded GET /get?foo=bar", terminal: demo.terminal)
    }

    static let transfers = Scenario(
        number: 9,
        title: "Upload a multipart file and download a large body, with progress bars",
        runsAgainstExternalTarget: true
    ) { demo in
        let client = demo.client()
        let directory = FileManager.default.temporaryDirectory
        let source = directory.appendingPathComponent("courier-demo-upload-\(UUID())")
        let destination = directory.appendingPathComponent("courier-demo-download-\(UUID())")
        defer {
            try? FileManager.default.removeItem(at: source)
            try? FileManager.default.removeItem(at: destination)
        }
        let uploadSize = demo.isExternalTarget ? 512 * 1024 : 2 * 1024 * 1024
        try Data(repeating: 0x2A, count: uploadSize).write(to: source)
        let upload = client.transfer(Upload(file: source))
        var printed = 0
        for await step in upload.progress where step.direction == .upload {
            demo.terminal.progress(
                "upload  ", completed: step.completedBytes, total: step.totalBytes, lastPrinted: &printed)
        }
        let echoed = try await upload.value
        let uploaded = check(
            echoed.form["title"] == "demo" && echoed.files["file"]?.count == uploadSize,
            "the multipart form arrived: a field and a \(uploadSize)-byte file",
            terminal: demo.terminal
        )

        let downloadSize = demo.isExternalTarget ? 100 * 1024 : 64 * 1024 * 1024
        let download = client.transfer(Download(bytes: downloadSize, destination: destination))
        printed = 0
        for await step in download.progress where step.direction == .download {
            demo.terminal.progress(
                "download", completed: step.completedBytes, total: step.totalBytes ?? Int64(downloadSize),
                lastPrinted: &printed)
        }
        let file = try await download.value
        return check(
            file.byteCount == downloadSize, "downloaded \(downloadSize) bytes to a file", terminal: demo.terminal)
    }
}

extension Bool {
    /// Non-short-circuiting "and", so every check prints.
    static func & (lhs: Bool, rhs: Bool) -> Bool { lhs && rhs }
}
