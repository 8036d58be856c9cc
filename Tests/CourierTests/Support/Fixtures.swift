import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// The seeds' httpbin POST, in Courier.
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

/// A GET with a query.
struct HTTPBinGet: Request {
    struct Response: Decodable, Sendable { let args: [String: String] }
    var path: String { "/get" }
    var query: Parameters? { ["foo": foo] }
    let foo: String
}

/// The server's error body from the seeds: `{"code":403,"reason":"Invalid Token."}`.
struct APIError: Decodable, Error, Equatable, UserPresentableError {
    let code: Int
    let reason: String
    var userMessage: String? { reason }
}

/// A request with fully custom adapters and decisions (the blog's `HttpBinCustomRequest`).
struct CustomRequest: Request {
    typealias Response = String
    var path: String { "/anything" }
    var adapters: [any RequestAdapter] { [.method(.put), .header("X-Custom", "1")] }
    var decisions: [any Decision] { [] }
}

/// A minimal request, parameterised by everything a test may vary.
struct Probe<Response: Sendable>: Request {
    var method: HTTPRequest.Method = .get
    var path: String = "/probe"
    var query: Parameters? = nil
    var headers: RequestHeaders = [:]
    var body: RequestBody? = nil
    var server: Server? = nil
    var environment: Server.Environment? = nil
    var authentication: AuthenticationRequirement = .optional
    var timeout: Duration? = nil
    var maxResponseBodySize: Int? = nil
    var extraAdapters: [any RequestAdapter] = []
    var decisionList: [any Decision] = [.validateStatus()]
    var retryPolicy: RetryPolicy? = nil
    var parse: @Sendable (ReceivedResponse, ParseContext) throws -> Response

    var adapters: [any RequestAdapter] { standardAdapters + extraAdapters }
    var decisions: [any Decision] { decisionList }
    var parser: any ResponseParser<Response> { ClosureParser(parse: parse) }
}

extension Probe where Response == String {
    init(method: HTTPRequest.Method = .get, path: String = "/probe") {
        self.init(
            method: method, path: path,
            parse: { response, context in
                try StringParser().parse(response, context: context)
            })
    }
}

struct ClosureParser<Output: Sendable>: ResponseParser {
    let parse: @Sendable (ReceivedResponse, ParseContext) throws -> Output
    func parse(_ response: ReceivedResponse, context: ParseContext) throws -> Output {
        try parse(response, context)
    }
}

enum Fixtures {
    static let baseURL = URL(string: "https://api.example.com")!
    static let server = Server(baseURL: baseURL)

    /// A client on a fresh mock transport.
    static func client(
        baseURL: URL = baseURL,
        configure: (inout Client.Configuration) -> Void = { _ in }
    ) -> (Client, MockTransport) {
        let mock = MockTransport()
        var configuration = Client.Configuration(retryPolicy: .disabled)  // unit tests opt into retries
        configure(&configuration)
        return (Client(server: Server(baseURL: baseURL), transport: mock, configuration: configuration), mock)
    }
}

/// Expects `body` to throw a `CourierError` and returns it.
func expectCourierError<T>(
    _ body: () async throws -> T,
    sourceLocation: SourceLocation = #_sourceLocation
) async -> CourierError? {
    do {
        _ = try await body()
        Issue.record("expected a CourierError, but the call succeeded", sourceLocation: sourceLocation)
        return nil
    } catch let error as CourierError {
        return error
    } catch {
        Issue.record("expected a CourierError, got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
