import Courier
import Foundation
import Testing

@testable import CourierOpenAPI

/// Which of the Courier client's servers a generated client's server URL picks (`usesGeneratedServerURL`).
@Suite("CourierTransport: the server for a generated server URL")
struct ServerMatchingTests {
    static func url(_ text: String) throws -> URL { try #require(URL(string: text)) }

    @Test("origin case and default ports are ignored, path case is not; a tie goes to the current environment")
    func matching() throws {
        let servers = [
            Server(baseURL: try Self.url("https://API.example.com/v1/"), environment: .production),
            Server(baseURL: try Self.url("https://api.example.com:443/v1"), environment: .staging),
            Server(baseURL: try Self.url("https://api.example.com/API"), environment: .local),
        ]
        let client = Courier.Client(
            servers: servers, environment: .staging, transport: TransportKind.asyncHTTPClient.make())
        let transport = CourierTransport(client: client, configuration: .init(usesGeneratedServerURL: true))

        // Production and staging are the same base: the client's current environment wins, every time.
        #expect(transport.server(for: try Self.url("https://api.example.com/v1")).environment == .staging)
        // `/api` is not `/API`: a server of its own, in the client's environment, without the local server's settings.
        let lower = transport.server(for: try Self.url("https://api.example.com/api"))
        #expect(lower.baseURL.path == "/api")
        #expect(transport.server(for: try Self.url("https://api.example.com/API")).environment == .local)
    }
}
