import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("BasicAuthAdapter", .timeLimit(.minutes(1)))
struct BasicAuthAdapterTests {
    private func adapt(
        _ adapter: BasicAuthAdapter,
        authority: String = "api.example.com",
        context: AdapterContext = AdapterFixtures.context()
    ) async throws -> OutgoingRequest {
        try await adapter.adapt(AdapterFixtures.outgoing(authority: authority), context: context)
    }

    @Test("attaches Authorization: Basic base64(user:password), UTF-8, for the server's origin")
    func attaches() async throws {
        let adapted = try await adapt(.basic(user: "Aladdin", password: "open sesame"))
        // RFC 7617 §2's example.
        #expect(adapted.head.headerFields.values(named: "Authorization") == ["Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="])
        let unicode = try await adapt(.basic(user: "test", password: "123£"))
        // RFC 7617 §2.1's example with charset UTF-8.
        #expect(unicode.head.headerFields[.authorization] == "Basic dGVzdDoxMjPCow==")
    }

    @Test("another origin gets nothing, and the provider is not asked")
    func foreignOrigin() async throws {
        let calls = CallCounter()
        let adapter = BasicAuthAdapter {
            await calls.increment()
            return ("u", "p")
        }
        let adapted = try await adapt(adapter, authority: "evil.example.com")
        #expect(adapted.head.headerFields[.authorization] == nil)
        #expect(await calls.count == 0)
    }

    @Test("no credentials: nothing for an optional request, missingCredential for a required one")
    func missing() async throws {
        let none = BasicAuthAdapter { nil }
        #expect(try await adapt(none).head.headerFields[.authorization] == nil)
        let error = await #expect(throws: CourierError.self) {
            try await adapt(none, context: AdapterFixtures.context(authentication: .required))
        }
        #expect(error?.code == .missingCredential)
    }

    @Test("a user with ':' is invalidConfiguration, and the password is in no message")
    func colonInUser() async throws {
        let error = await #expect(throws: CourierError.self) {
            try await adapt(.basic(user: "a:b", password: "s3cr3t-pw"))
        }
        #expect(error?.code == .invalidConfiguration)
        #expect(error.map { "\($0)" }?.contains("s3cr3t-pw") == false)
    }
}
