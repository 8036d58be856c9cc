import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("ClosureAdapter", .timeLimit(.minutes(1)))
struct ClosureAdapterTests {
    static let signature = HTTPField.Name("X-Signature")!

    @Test("runs the closure with the request and context and returns its result")
    func runsClosure() async throws {
        let adapter = ClosureAdapter(name: "sign") { request, context in
            var request = request
            request.head.headerFields[Self.signature] = "\(request.head.method.rawValue) attempt=\(context.attempt)"
            return request
        }
        #expect(adapter.name == "sign")
        let context = AdapterContext(attempt: 3, server: AdapterFixtures.server)
        let adapted = try await adapter.adapt(AdapterFixtures.outgoing(method: .delete), context: context)
        #expect(adapted.head.headerFields[Self.signature] == "DELETE attempt=3")
    }

    @Test("an adapter with only the by-value form is run in place through it")
    func inPlaceDefault() async throws {
        let adapter: any RequestAdapter = ClosureAdapter(name: "sign") { request, _ in
            var request = request
            request.head.headerFields[Self.signature] = "signed"
            return request
        }
        var request = AdapterFixtures.outgoing(method: .put)
        try await adapter.adapt(&request, context: AdapterFixtures.context())
        #expect(request.head.headerFields[Self.signature] == "signed")
        #expect(request.head.method == .put)
    }

    @Test(".custom builds the same adapter by static-member lookup")
    func staticMember() async throws {
        let adapter: any RequestAdapter = .custom("path") { request, _ in
            var request = request
            request.head.path = "/rewritten"
            return request
        }
        #expect(adapter.name == "path")
        #expect(adapter is ClosureAdapter)
        let adapted = try await adapter.adapt(AdapterFixtures.outgoing(), context: AdapterFixtures.context())
        #expect(adapted.head.path == "/rewritten")
    }

    @Test("an error thrown by the closure propagates unchanged")
    func errorPropagates() async throws {
        let adapter = ClosureAdapter(name: "fail") { _, _ in throw TestFailure(reason: "boom") }
        await #expect(throws: TestFailure(reason: "boom")) {
            _ = try await adapter.adapt(AdapterFixtures.outgoing(), context: AdapterFixtures.context())
        }
    }

    @Test("through a client, the closure sees the request after the request's adapters and its change is sent")
    func throughClient() async throws {
        let (client, mock) = AdapterFixtures.answeringClient {
            $0.adapters.append(
                .custom("sign") { request, context in
                    var request = request
                    let body = try await request.bodyText() ?? ""
                    let path = request.head.path ?? ""
                    request.head.headerFields[Self.signature] = "\(path)|\(body)|\(context.server.environment)"
                    return request
                })
        }
        _ = try await client.send(AdapterFixtures.probe(method: .post, query: ["a": "1"], body: .text("hi")))
        let sent = try #require(mock.recordedRequests.first)
        #expect(sent.head.headerFields[Self.signature] == "/probe?a=1|hi|production")
        #expect(sent.bodyText == "hi")
    }

    @Test("through a client, the context carries the client's coders and every configured server")
    func contextThroughClient() async throws {
        let mock = MockTransport()
        mock.enqueue(.text("ok"))
        let staging = Server(baseURL: URL(string: "https://staging.example.com")!, environment: .staging)
        var configuration = Client.Configuration()
        configuration.queryEncoder = URLEncodedFormEncoder(boolEncoding: .numeric)
        configuration.adapters = [
            .custom("inspect") { request, context in
                var request = request
                let query = try context.queryEncoder.encode(["b": true])
                let hosts = context.knownServers.compactMap(\.origin?.host).sorted().joined(separator: ",")
                request.head.headerFields[Self.signature] = "\(query) \(hosts) \(context.authentication)"
                return request
            }
        ]
        let client = Client(
            servers: [AdapterFixtures.server, staging], environment: .production, transport: mock,
            configuration: configuration)
        _ = try await client.send(AdapterFixtures.probe(authentication: .required))
        let sent = try #require(mock.recordedRequests.first)
        #expect(sent.head.headerFields[Self.signature] == "b=1 api.example.com,staging.example.com required")
    }

    @Test("through a client, a thrown error fails the call as adapterFailed, names the adapter and sends nothing")
    func errorThroughClient() async throws {
        let (client, mock) = AdapterFixtures.answeringClient {
            $0.adapters.append(.custom("fail") { _, _ in throw TestFailure(reason: "boom") })
        }
        let error = await expectCourierError { try await client.send(AdapterFixtures.probe()) }
        #expect(error?.code == .adapterFailed)
        #expect(error?.stage == .adapt)
        #expect(error?.underlyingError as? TestFailure == TestFailure(reason: "boom"))
        #expect(
            error?.trace.steps.last == DecisionTrace.Step(kind: .adapter, name: "fail", outcome: .failed, attempt: 1))
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test("through a client, a thrown CourierError passes through with its own code")
    func courierErrorThroughClient() async throws {
        let (client, mock) = AdapterFixtures.answeringClient {
            $0.adapters.append(
                .custom("deny") { _, _ in throw CourierError(code: .missingCredential, stage: .adapt, message: "no") })
        }
        let error = await expectCourierError { try await client.send(AdapterFixtures.probe()) }
        #expect(error?.code == .missingCredential)
        #expect(error?.message == "no")
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test("through a client, adapters run in order: request's, then client's")
    func order() async throws {
        let (client, mock) = AdapterFixtures.answeringClient {
            $0.adapters = [
                .custom("client") { request, _ in
                    var request = request
                    request.head.headerFields[Self.signature] = (request.head.headerFields[Self.signature] ?? "") + "c"
                    return request
                }
            ]
        }
        let stamp = ClosureAdapter(name: "request") { request, _ in
            var request = request
            request.head.headerFields[Self.signature] = (request.head.headerFields[Self.signature] ?? "") + "r"
            return request
        }
        let error = await expectCourierError {
            try await client.send(
                AdapterFixtures.probe(adapters: [stamp, .custom("stop") { _, _ in throw TestFailure(reason: "x") }]))
        }
        #expect(error?.trace.adapterNames(attempt: 1) == ["method", "request", "stop"])
        _ = try await client.send(AdapterFixtures.probe(adapters: [stamp]))
        #expect(mock.recordedRequests.first?.head.headerFields[Self.signature] == "rc")
    }
}
