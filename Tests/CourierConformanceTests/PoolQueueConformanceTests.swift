import Courier
import CourierAsyncHTTPClient
import CourierTestServer
import Foundation
import HTTPTypes
import Testing

extension Conformance {
    /// AsyncHTTPClient fails a request that waited its connect timeout in the pool's queue while every connection
    /// was busy; Courier's transport queues it again, so a busy pool is not an unreachable server.
    @Suite("Conformance: AsyncHTTPClient's pool queue", .timeLimit(.minutes(1)))
    struct PoolQueueConformanceTests {
        struct Slow: Request {
            typealias Response = String
            var path: String { "/slow" }
        }

        struct Queued: Request {
            typealias Response = String
            var method: HTTPRequest.Method { .post }
            var path: String { "/queued" }
            var body: RequestBody? { .text("payload") }
            var timeout: Duration?
        }

        /// A client on a pool of one connection with a 300 ms connect timeout, retries off (a retry would hide a
        /// failed wait), while `/slow` holds the connection for 1.2 s, four connect timeouts.
        static func lab(_ server: TestServer) -> (Client, AsyncStream<Void>) {
            let (holding, holds) = AsyncStream<Void>.makeStream()
            server.register("GET", "/slow") { _ in
                holds.yield()
                try await Task.sleep(for: .milliseconds(1200))
                return .text("slow")
            }
            server.register("POST", "/queued") { _ in .text("queued") }
            let transport = AsyncHTTPClientTransport(
                configuration: .init(connectTimeout: .milliseconds(300), maxConnectionsPerHost: 1))
            var configuration = Client.Configuration()
            configuration.retryPolicy = .disabled
            return (
                Client(server: Server(baseURL: server.baseURL), transport: transport, configuration: configuration),
                holding
            )
        }

        @Test("a POST that waits four connect timeouts for the pool's only connection is sent once, when it is free")
        func queuedPastTheConnectTimeout() async throws {
            try await withTestServer { server in
                let (client, holding) = Self.lab(server)
                async let slow = client.send(Slow())
                for await _ in holding { break }
                let start = ContinuousClock.now
                let queued = try await client.exchange(for: Queued())
                #expect(queued.value == "queued")
                #expect(queued.attempts == 1)
                #expect(ContinuousClock.now - start > .milliseconds(600), "it did not wait for the connection")
                #expect(try await slow == "slow")
                #expect(server.requestCount == 2)
            }
        }

        @Test("the wait is bounded by the call's deadline: timedOut at 500 ms, nothing sent")
        func queuedUntilTheDeadline() async throws {
            try await withTestServer { server in
                let (client, holding) = Self.lab(server)
                async let slow = client.send(Slow())
                for await _ in holding { break }
                let start = ContinuousClock.now
                let failure = await expectCourierError { try await client.send(Queued(timeout: .milliseconds(500))) }
                let elapsed = ContinuousClock.now - start
                #expect(failure?.code == .timedOut, "\(String(describing: failure))")
                #expect(elapsed < .milliseconds(1100), "waited \(elapsed)")
                let answer = try await slow
                #expect(answer == "slow")
                #expect(server.requestCount == 1)
            }
        }
    }
}
