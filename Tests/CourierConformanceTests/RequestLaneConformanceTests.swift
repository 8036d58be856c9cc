import Courier
import CourierAsyncHTTPClient
import CourierTestServer
import CourierURLSession
import Foundation
import HTTPTypes
import Testing

extension Conformance {
    /// Auth under load (issue #17): the token request never waits behind the calls it rescues, and calls that wait
    /// for a slot of ``Client/Configuration/maxConcurrentRequests`` go out with the refreshed token, not the rejected
    /// one.
    @Suite("Conformance: request lanes and the concurrency limit", .timeLimit(.minutes(2)))
    struct RequestLaneConformanceTests {
        struct Held: Request {
            typealias Response = String
            var path: String { "/held" }
        }

        struct Urgent: Request {
            typealias Response = String
            var path: String { "/urgent" }
            var lane: RequestLane { .priority }
            var timeout: Duration? { .seconds(10) }
        }

        /// A transport with a pool of one connection.
        static func singleConnection(_ transport: TransportKind) -> any Transport {
            transport == .asyncHTTPClient
                ? AsyncHTTPClientTransport(configuration: .init(maxConnectionsPerHost: 1))
                : URLSessionTransport(maxConcurrentRequests: 1)
        }

        @Test(
            "a priority request is answered while the only connection of the pool is held by a call waiting for it",
            arguments: TransportKind.all)
        func priorityLaneSkipsTheHeldPool(transport: TransportKind) async throws {
            try await withTestServer { server in
                let (released, release) = AsyncStream<Void>.makeStream()
                let (holding, holds) = AsyncStream<Void>.makeStream()
                server.register("GET", "/held") { _ in
                    holds.yield()
                    for await _ in released { break }
                    return .text("held")
                }
                server.register("GET", "/urgent") { _ in .text("urgent") }
                let client = Client(
                    server: Server(baseURL: server.baseURL), transport: Self.singleConnection(transport))
                async let held = client.send(Held())
                // The held call has the pool's one connection once the server has it.
                for await _ in holding { break }
                // Without its own lane this waits for the held call, which waits for this one: the 10 s timeout.
                let urgent = try await client.send(Urgent())
                #expect(urgent == "urgent")
                release.yield()
                #expect(try await held == "held")
            }
        }

        @Test(
            "1,000 concurrent calls on a rejected token with maxConcurrentRequests 8: one refresh, and only the calls in flight carry the old token",
            arguments: TransportKind.all)
        func queuedCallsAreSignedAfterTheRefresh(transport: TransportKind) async throws {
            let count = 1000
            let limit = 8
            let (server, tokens, client) = try await AuthConformanceTests.rejectedTokenLab(transport) {
                $0.maxConcurrentRequests = limit
            }
            do {
                let results = try await withThrowingTaskGroup(of: String.self) { group in
                    for _ in 0..<count { group.addTask { try await client.send(AuthConformanceTests.Protected()) } }
                    return try await group.reduce(into: [String]()) { $0.append($1) }
                }
                #expect(results.count == count && results.allSatisfy { $0 == "ok" })
                #expect(await tokens.tokenCalls == 1)
                // At most the calls holding a slot when the first 401 came back were signed with the old token (the
                // rest waited, then joined the refresh); without the limit, about all 1,000 are.
                let old = await tokens.signedWithOld
                #expect((1...limit).contains(old), "\(old) calls were signed with the rejected token")
                #expect(await tokens.rejections == old)
                #expect(await tokens.accepted == count)
                try await server.shutdown()
            } catch {
                try? await server.shutdown()
                throw error
            }
        }
    }
}
