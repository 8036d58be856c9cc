import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// Identical idempotent requests in flight share one transfer; it is cancelled only when every caller cancels.
@Suite("In-flight de-duplication", .timeLimit(.minutes(1)))
struct InflightDeduplicationTests {
    typealias Page = CacheFixtures.Page

    /// A client with de-duplication whose `/page` waits on `gate` and reports its own cancellation to `cancelled`.
    private func client(gate: AuthFixtures.Gate, cancelled: Cancellations) -> (Client, MockTransport) {
        let (client, mock) = Fixtures.client { $0.deduplicatesRequests = true }
        mock.stub(
            .get, "/page",
            handler: { _ in
                await withTaskCancellationHandler {
                    await gate.pass()
                } onCancel: {
                    cancelled.record()
                }
                try Task.checkCancellation()
                return .text("shared")
            })
        return (client, mock)
    }

    /// Counts cancellations of the shared transfer, and lets a test await the first.
    final class Cancellations: Sendable {
        private let count = DecisionFixtures.Shared(0)
        private let stream: AsyncStream<Void>
        private let continuation: AsyncStream<Void>.Continuation

        init() { (stream, continuation) = AsyncStream.makeStream() }

        var value: Int { count.value }

        func record() {
            count.update { $0 += 1 }
            continuation.yield()
        }

        func first() async {
            for await _ in stream { return }
        }
    }

    /// Waits until `count` callers wait on the in-flight transfer.
    private func waitForCallers(_ count: Int, on client: Client) async {
        await client.configuration.waitForInflightCallers(count)
    }

    @Test("three identical GETs share one transfer; each caller gets the value")
    func sharesOneTransfer() async throws {
        let gate = AuthFixtures.Gate()
        let cancelled = Cancellations()
        let (client, mock) = client(gate: gate, cancelled: cancelled)
        async let first = client.send(Page())
        async let second = client.send(Page())
        async let third = client.send(Page())
        await gate.waitForArrivals(1)
        await waitForCallers(3, on: client)
        await gate.open()
        let values = try await [first, second, third]
        #expect(values == ["shared", "shared", "shared"])
        #expect(mock.recordedRequests.count == 1)
        #expect(client.configuration.inflightCounts.transfers == 0)
    }

    @Test("a cancelled caller stops waiting; the transfer goes on for the others")
    func oneCallerCancels() async throws {
        let gate = AuthFixtures.Gate()
        let cancelled = Cancellations()
        let (client, mock) = client(gate: gate, cancelled: cancelled)
        let leaving = Task { try await client.send(Page()) }
        let staying = Task { try await client.send(Page()) }
        await gate.waitForArrivals(1)
        await waitForCallers(2, on: client)
        leaving.cancel()
        await #expect(throws: CancellationError.self) { try await leaving.value }
        #expect(cancelled.value == 0)
        await gate.open()
        #expect(try await staying.value == "shared")
        #expect(mock.recordedRequests.count == 1)
    }

    @Test("the transfer is cancelled when every caller has cancelled")
    func allCallersCancel() async throws {
        let gate = AuthFixtures.Gate()
        let cancelled = Cancellations()
        let (client, _) = client(gate: gate, cancelled: cancelled)
        let callers = [Task { try await client.send(Page()) }, Task { try await client.send(Page()) }]
        await gate.waitForArrivals(1)
        await waitForCallers(2, on: client)
        callers[0].cancel()
        callers[1].cancel()
        for caller in callers { await #expect(throws: CancellationError.self) { try await caller.value } }
        await cancelled.first()
        #expect(cancelled.value == 1)
        #expect(client.configuration.inflightCounts.transfers == 0)
        await gate.open()
    }

    @Test("different credentials, POSTs and the default configuration never share")
    func neverShared() async throws {
        let gate = AuthFixtures.Gate()
        let cancelled = Cancellations()
        let (client, mock) = client(gate: gate, cancelled: cancelled)
        async let alice = client.send(Page(headers: ["Authorization": "Bearer a"]))
        async let bob = client.send(Page(headers: ["Authorization": "Bearer b"]))
        await gate.waitForArrivals(2)
        await gate.open()
        _ = try await [alice, bob]
        #expect(mock.recordedRequests.count == 2)

        let (plain, plainMock) = Fixtures.client()
        let plainGate = AuthFixtures.Gate()
        plainMock.stub(
            .get, "/page",
            handler: { _ in
                await plainGate.pass()
                return .text("x")
            })
        async let one = plain.send(Page())
        async let two = plain.send(Page())
        await plainGate.waitForArrivals(2)
        await plainGate.open()
        _ = try await [one, two]
        #expect(plainMock.recordedRequests.count == 2)
    }
}

@Suite("In-flight de-duplication with the cache", .timeLimit(.minutes(1)))
struct InflightCacheTests {
    typealias Page = CacheFixtures.Page

    /// A de-duplicating client with a cache, whose `GET /page` ("v1", fresh for 60 s) waits at the gate, and whose
    /// `PUT /page` succeeds.
    private static func gatedPage() throws -> (CacheFixtures.Harness, AuthFixtures.Gate) {
        let harness = try CacheFixtures.harness { $0.deduplicatesRequests = true }
        let gate = harness.stubGated("/page", body: "v1")
        harness.mock.stub(.put, "/page", with: .text("updated"))
        return (harness, gate)
    }

    @Test("a GET after an invalidation does not join the transfer started before it: it reads the page as changed")
    func noJoinAfterAnInvalidation() async throws {
        let harness = try CacheFixtures.harness { $0.deduplicatesRequests = true }
        let gate = AuthFixtures.Gate()
        let gets = DecisionFixtures.Counter()
        let fresh = CacheFixtures.fields(["Cache-Control": "max-age=60"])
        harness.mock.stub(
            .get, "/page",
            handler: { _ in
                guard gets.next() == 1 else { return .text("v2", headerFields: fresh) }
                await gate.pass()
                return .text("v1", headerFields: fresh)
            })
        harness.mock.stub(.put, "/page", with: .text("updated"))

        // A GET is out when a PUT changes the page (and invalidates it); the next GET makes a transfer of its own.
        let first = Task { try await harness.send() }
        await gate.waitForArrivals(1)
        await harness.client.configuration.waitForInflightCallers(1)
        _ = try await harness.send(Page(method: .put, body: .text("v2")))
        let second = try await harness.send()
        #expect(second.value == "v2" && second.cacheStatus?.outcome == .miss)
        await gate.open()
        #expect(try await first.value.value == "v1")

        // "v1" was fetched before the PUT and is not stored; "v2" is.
        let third = try await harness.send()
        #expect(third.value == "v2" && third.cacheStatus?.outcome == .hit)
        #expect(harness.mock.recordedRequests.filter { $0.head.method == .get }.count == 2)
    }

    @Test("without a cache too: a GET after a successful PUT does not join the GET started before it")
    func noJoinAfterAWriteWithoutACache() async throws {
        let (client, mock) = Fixtures.client { $0.deduplicatesRequests = true }
        let gate = AuthFixtures.Gate()
        let gets = DecisionFixtures.Counter()
        mock.stub(
            .get, "/page",
            handler: { _ in
                guard gets.next() == 1 else { return .text("v2") }
                await gate.pass()
                return .text("v1")
            })
        mock.stub(.put, "/page", with: .text("updated"))

        let first = Task { try await client.send(Page()) }
        await gate.waitForArrivals(1)
        await client.configuration.waitForInflightCallers(1)
        _ = try await client.send(Page(method: .put, body: .text("v2")))
        let second = try await client.send(Page())
        #expect(second == "v2", "read after the write")
        await gate.open()
        #expect(try await first.value == "v1")
        #expect(mock.recordedRequests.filter { $0.head.method == .get }.count == 2)
    }

    @Test("a write to another URL does not stop identical GETs from sharing the transfer in flight")
    func writeElsewhereKeepsSharing() async throws {
        let (client, mock) = Fixtures.client { $0.deduplicatesRequests = true }
        let gate = AuthFixtures.Gate()
        mock.stub(
            .get, "/page",
            handler: { _ in
                await gate.pass()
                return .text("v1")
            })
        mock.stub(.post, "/analytics", with: .text("ok"))

        let first = Task { try await client.send(Page()) }
        await gate.waitForArrivals(1)
        _ = try await client.send(Page(method: .post, path: "/analytics", body: .text("event")))
        let second = Task { try await client.send(Page()) }
        await client.configuration.waitForInflightCallers(2)
        await gate.open()
        #expect(try await first.value == "v1")
        #expect(try await second.value == "v1")
        #expect(mock.recordedRequests.filter { $0.head.method == .get }.count == 1)
    }

    @Test("a GET with other TLS options (or proxy, or lane) does not join a transfer: it makes its own")
    func otherTLSDoesNotShare() async throws {
        let (harness, gate) = try Self.gatedPage()
        var strict = TLSOptions.default
        strict.minimumVersion = .tls13
        let pinned = harness.client.configured { $0.tls = strict }  // shares the transfers in flight

        let first = Task { try await harness.send() }
        let second = Task { try await pinned.sendWithCacheStatus(Page()) }
        let third = Task { try await harness.client.sendWithCacheStatus(Page(lane: .priority)) }
        await harness.client.configuration.waitForInflightCallers(3)
        await gate.open()
        _ = try await (first.value, second.value, third.value)
        #expect(harness.mock.recordedRequests.count == 3, "a call joined a transfer made with other TLS or lane")
        #expect(Set(harness.mock.recordedRequests.map { $0.attempt }) == [1])
    }

    @Test("a GET of another cache's client that joins a transfer does not store it after its own invalidation")
    func joinerOfAnotherCache() async throws {
        let (harness, gate) = try Self.gatedPage()
        let otherCache = try HTTPCache(storage: .memory(byteLimit: 1 << 20), now: harness.time.closure)
        let other = harness.client.configured { $0.cache = otherCache }  // shares the transfers in flight
        harness.mock.stub(.put, "/elsewhere", with: .text("updated"))

        // Both caches have seen one removal; the first client's GET starts the transfer, then the other client's
        // cache is purged (a sign-out: a removal, not a write, which no GET would join across), and its GET joins the
        // transfer begun before that purge.
        _ = try await harness.send(Page(method: .put, path: "/elsewhere", body: .text("x")))
        let first = Task { try await harness.send() }
        await gate.waitForArrivals(1)
        try await otherCache.removeEntries(.all)
        let second = Task { try await other.sendWithCacheStatus(Page()) }
        await harness.client.configuration.waitForInflightCallers(2)
        await gate.open()
        _ = try await first.value
        _ = try await second.value

        let third = try await other.sendWithCacheStatus(Page())
        #expect(third.cacheStatus?.outcome == .miss, "the other cache kept a response fetched before its PUT")
    }
}
