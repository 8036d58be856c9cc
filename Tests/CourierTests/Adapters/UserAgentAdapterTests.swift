import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("UserAgentAdapter", .timeLimit(.minutes(1)))
struct UserAgentAdapterTests {
    @Test("the default names the library, its version and the platform")
    func defaultValue() {
        #expect(
            UserAgentAdapter.courier.userAgent == "Courier/\(CourierLibrary.version) (\(CourierLibrary.platformName))")
        #expect(UserAgentAdapter.courier.replacesExisting == false)
        #expect(UserAgentAdapter.courier.name == "userAgent")
    }

    @Test("sets User-Agent when the request has none")
    func setsWhenMissing() async throws {
        let adapted = try await UserAgentAdapter("App/1.0").adapt(
            AdapterFixtures.outgoing(), context: AdapterFixtures.context())
        #expect(adapted.head.headerFields.values(named: "User-Agent") == ["App/1.0"])
    }

    @Test("the default does not override an existing User-Agent")
    func defaultKeepsExisting() async throws {
        let original = AdapterFixtures.outgoing(headers: [.userAgent: "Mine/2"])
        let adapted = try await UserAgentAdapter.courier.adapt(original, context: AdapterFixtures.context())
        #expect(adapted.head.headerFields.values(named: "User-Agent") == ["Mine/2"])
    }

    @Test(".userAgent replaces an existing User-Agent, leaving exactly one")
    func staticMemberReplaces() async throws {
        let original = AdapterFixtures.outgoing(headers: [.userAgent: "Mine/2"])
        let adapter: any RequestAdapter = .userAgent("App/3")
        let adapted = try await adapter.adapt(original, context: AdapterFixtures.context())
        #expect(adapted.head.headerFields.values(named: "User-Agent") == ["App/3"])
        #expect((adapter as? UserAgentAdapter)?.replacesExisting == true)
    }

    @Test("in place and by value give the same request; by value leaves its argument as it was")
    func inPlaceAndByValueAgree() async throws {
        let original = AdapterFixtures.outgoing(headers: [.accept: "text/plain"])
        let adapter: any RequestAdapter = UserAgentAdapter("App/4")
        let returned = try await adapter.adapt(original, context: AdapterFixtures.context())
        var changed = original
        try await adapter.adapt(&changed, context: AdapterFixtures.context())
        #expect(returned.head == changed.head)
        #expect(changed.head.headerFields.values(named: "User-Agent") == ["App/4"])
        #expect(original.head.headerFields[.userAgent] == nil)
    }

    @Test("a value with CR/LF is invalidHeader", arguments: ["App\r\nX-Injected: 1", "App\0", "App\u{7F}"])
    func invalidValue(value: String) async throws {
        let error = await expectCourierError {
            try await UserAgentAdapter(value).adapt(AdapterFixtures.outgoing(), context: AdapterFixtures.context())
        }
        #expect(error?.code == .invalidHeader)
    }

    @Test("through a client, every request carries the default User-Agent")
    func throughClientDefault() async throws {
        let (client, mock) = AdapterFixtures.answeringClient()
        _ = try await client.send(AdapterFixtures.probe())
        let sent = try #require(mock.recordedRequests.first)
        #expect(sent.head.headerFields.values(named: "User-Agent") == [UserAgentAdapter.courier.userAgent])
    }

    @Test("through a client, a request's own User-Agent wins over the default")
    func throughClientRequestWins() async throws {
        let (client, mock) = AdapterFixtures.answeringClient()
        _ = try await client.send(AdapterFixtures.probe(headers: ["user-agent": "Mine/2"]))
        #expect(mock.recordedRequests.first?.head.headerFields.values(named: "User-Agent") == ["Mine/2"])
    }

    @Test("through a client, a configured .userAgent replaces the request's")
    func throughClientConfiguredReplaces() async throws {
        let (client, mock) = AdapterFixtures.answeringClient { $0.adapters = [.userAgent("App/3")] }
        _ = try await client.send(AdapterFixtures.probe(headers: ["User-Agent": "Mine/2"]))
        #expect(mock.recordedRequests.first?.head.headerFields.values(named: "User-Agent") == ["App/3"])
    }

    @Test("through a client with no adapters, no User-Agent is sent")
    func throughClientNone() async throws {
        let (client, mock) = AdapterFixtures.answeringClient { $0.adapters = [] }
        _ = try await client.send(AdapterFixtures.probe())
        #expect(mock.recordedRequests.first?.head.headerFields[.userAgent] == nil)
    }
}
