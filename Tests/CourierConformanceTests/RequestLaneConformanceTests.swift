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

        struct Busy: Request {
            typealias Response = String
            var path: String { "/busy" }
        }

        struct Other: Request {
            typealias Response = String
            var path: String { "/other" }
            var timeout: Duration? { .seconds(10) }
        }

        @Test(
            "a call waiting out a 503's Retry-After gives its slot back: another call goes out through a limit of 1",
            arguments: TransportKind.all)
        func backOffGivesTheSlotBack(transport: TransportKind) async throws {
            try await withTestServer { server in
                let busyHits = FaultConformanceTests.Attempts()
                server.register("GET", "/busy") { _ in
                    await busyHits.next() == 1
                        ? TestServerResponse(status: 503, headers: [("Retry-After", "30")], body: Array("busy".utf8))
                        : .text("done")
                }
                server.register("GET", "/other") { _ in .text("other") }
                let clock = GatedClock()
                let client = makeClient(transport, server.baseURL) {
                    $0.clock = clock
                    $0.maxConcurrentRequests = 1
                }
                async let busy = client.send(Busy())
                // The busy call is in its 30 s back-off (on the gated clock, so it waits until the gate opens).
                var pauses = clock.sleepStarted.makeAsyncIterator()
                #expect(await pauses.next() == .seconds(30))
                // Without that, this call waits for the slot until its 10 s timeout: the back-off never ends.
                let other = try await client.send(Other())
                #expect(other == "other")
                clock.open()
                let done = try await busy
                #expect(done == "done")
                #expect(await busyHits.count == 2)
            }
        }

        /// A clock whose sleeps announce their length on ``sleepStarted`` and end when ``open()`` is called.
        final class GatedClock: Clock, Sendable {
            struct Instant: InstantProtocol {
                var offset: Duration
                func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
                func duration(to other: Instant) -> Duration { other.offset - offset }
                static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
            }

            let sleepStarted: AsyncStream<Duration>
            private let started: AsyncStream<Duration>.Continuation
            private let gate: AsyncStream<Never>
            private let opener: AsyncStream<Never>.Continuation

            init() {
                (sleepStarted, started) = AsyncStream.makeStream()
                (gate, opener) = AsyncStream.makeStream()
            }

            var now: Instant { Instant(offset: .zero) }
            var minimumResolution: Duration { .zero }

            func open() { opener.finish() }

            func sleep(until deadline: Instant, tolerance: Duration?) async throws {
                started.yield(now.duration(to: deadline))
                for await _ in gate {}
                try Task.checkCancellation()
            }
        }
    }
}
