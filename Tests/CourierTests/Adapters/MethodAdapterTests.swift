import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("MethodAdapter", .timeLimit(.minutes(1)))
struct MethodAdapterTests {
    static let methods: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete, .options]

    @Test("sets the method and leaves the rest of the request alone", arguments: methods)
    func setsMethodDirectly(method: HTTPRequest.Method) async throws {
        let original = AdapterFixtures.outgoing(
            method: .get, path: "/a?b=c", headers: [.accept: "application/json"])
        let adapted = try await MethodAdapter(method).adapt(original, context: AdapterFixtures.context())
        #expect(adapted.head.method == method)
        #expect(adapted.head.path == "/a?b=c")
        #expect(adapted.head.authority == "api.example.com")
        #expect(adapted.head.headerFields == original.head.headerFields)
        #expect(adapted.body == nil)
    }

    @Test("a custom method token is kept as written")
    func customMethod() async throws {
        let method = try #require(HTTPRequest.Method("PROPFIND"))
        let adapted = try await MethodAdapter.method(method).adapt(
            AdapterFixtures.outgoing(), context: AdapterFixtures.context())
        #expect(adapted.head.method.rawValue == "PROPFIND")
    }

    @Test("name and static-member lookup")
    func nameAndLookup() {
        let adapter: any RequestAdapter = .method(.delete)
        #expect(adapter.name == "method")
        #expect((adapter as? MethodAdapter)?.method == .delete)
    }

    @Test("through a client, the request's method reaches the transport", arguments: methods)
    func throughClient(method: HTTPRequest.Method) async throws {
        let (client, mock) = AdapterFixtures.answeringClient()
        _ = try await client.send(AdapterFixtures.probe(method: method))
        let sent = try #require(mock.recordedRequests.first)
        #expect(mock.recordedRequests.count == 1)
        #expect(sent.head.method == method)
    }

    @Test("a later method adapter overrides the request's method")
    func laterAdapterWins() async throws {
        let (client, mock) = AdapterFixtures.answeringClient()
        _ = try await client.send(AdapterFixtures.probe(method: .get, adapters: [.method(.put)]))
        #expect(mock.recordedRequests.first?.head.method == .put)
    }

    @Test("a request with custom adapters and no method adapter is sent as GET")
    func defaultIsGet() async throws {
        struct NoMethod: Request {
            typealias Response = String
            var path: String { "/probe" }
            var adapters: [any RequestAdapter] { [] }
        }
        let (client, mock) = AdapterFixtures.answeringClient()
        _ = try await client.send(NoMethod())
        #expect(mock.recordedRequests.first?.head.method == .get)
    }
}
