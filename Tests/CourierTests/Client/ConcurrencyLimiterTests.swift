import CourierTesting
import Foundation
import Testing

@testable import CourierCore

@Suite("ConcurrencyLimiter: maxConcurrentRequests' queue", .timeLimit(.minutes(1)))
struct ConcurrencyLimiterTests {
    /// Waits until `count` calls wait for a slot (the limiter's own count, not a sleep).
    private func waitUntil(_ limiter: ConcurrencyLimiter, waiting count: Int) async {
        while limiter.waiting != count { await Task.yield() }
    }

    @Test("the waiters get their slots in the order they asked")
    func firstInFirstOut() async throws {
        let limiter = ConcurrencyLimiter(limit: 1)
        try await limiter.acquire()
        let order = LockedBox<[Int]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<5 {
                group.addTask {
                    try await limiter.acquire()
                    order.withLock { $0.append(index) }
                    limiter.release()
                }
                await waitUntil(limiter, waiting: index + 1)
            }
            limiter.release()
            try await group.waitForAll()
        }
        #expect(order.withLock { $0 } == [0, 1, 2, 3, 4])
        #expect(limiter.waiting == 0)
    }

    @Test("a waiter cancelled in the queue throws CancellationError and the slot goes to the next one")
    func cancelledWaiterTakesNoSlot() async throws {
        let limiter = ConcurrencyLimiter(limit: 1)
        try await limiter.acquire()
        let cancelled = Task { try await limiter.acquire() }
        await waitUntil(limiter, waiting: 1)
        let next = Task { try await limiter.acquire() }
        await waitUntil(limiter, waiting: 2)
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(limiter.waiting == 1)
        limiter.release()
        try await next.value
        // The one slot is held by `next`: a new caller waits until it is released.
        let last = Task { try await limiter.acquire() }
        await waitUntil(limiter, waiting: 1)
        limiter.release()
        try await last.value
        #expect(limiter.waiting == 0)
    }

    @Test("a slot given back while a call is between its check and its queueing goes to that call")
    func releaseRacingAQueueingCall() async throws {
        // The limiter used to check for a free slot, drop its lock, and queue the call under a second lock: a
        // release in between returned the slot to the pool, and the call then queued behind a free slot and waited
        // for a release that might never come. The state that shows it, a free slot with a waiter, lasts until the
        // next release, so the loop sees it whenever the race was lost; it then releases once more to go on.
        let limiter = ConcurrencyLimiter(limit: 1)
        var stuck = 0
        for _ in 0..<20_000 {
            try await limiter.acquire()
            let done = LockedBox(false)
            let waiter = Task {
                try await limiter.acquire()
                done.withLock { $0 = true }
                limiter.release()
            }
            limiter.release()
            while !done.withLock({ $0 }) {
                if limiter.waiting == 1, limiter.free == 1 {
                    stuck += 1
                    limiter.release()
                }
                await Task.yield()
            }
            try await waiter.value
        }
        #expect(stuck == 0, "a call waited behind a free slot \(stuck) times")
        #expect(limiter.free == 1)
    }

    @Test("up to the limit, nobody waits")
    func belowTheLimit() async throws {
        let limiter = ConcurrencyLimiter(limit: 3)
        for _ in 0..<3 { try await limiter.acquire() }
        #expect(limiter.waiting == 0)
        let fourth = Task { try await limiter.acquire() }
        await waitUntil(limiter, waiting: 1)
        limiter.release()
        try await fourth.value
        #expect(limiter.waiting == 0)
    }

    private struct Probe: Request {
        typealias Response = String
        var path: String { "/probe" }
        var retryPolicy: RetryPolicy? { .disabled }
    }

    @Test("a call whose decisions fail gives its slot back: the next call through a limit of 1 goes out")
    func failedCallReleasesItsSlot() async throws {
        let mock = MockTransport()
        mock.stub(nil, "/probe", with: [.status(500), .text("ok")])
        var configuration = Client.Configuration()
        configuration.maxConcurrentRequests = 1
        let server = Server(baseURL: try #require(URL(string: "https://api.example.com")))
        let client = Client(server: server, transport: mock, configuration: configuration)
        await #expect(throws: CourierError.self) { try await client.send(Probe()) }
        #expect(try await client.send(Probe()) == "ok")
        #expect(client.limiter?.waiting == 0)
    }

    @Test("a deadline that passes while a call waits for a slot says so: nothing was sent")
    func deadlineInTheQueue() async throws {
        struct Timed: Request {
            typealias Response = String
            var path: String
            var timeout: Duration?
        }
        let mock = MockTransport()
        mock.stub(nil, "/stalled", with: .text("never", fault: .stall))
        mock.stub(nil, "/late", with: .text("ok"))
        var configuration = Client.Configuration()
        configuration.maxConcurrentRequests = 1
        let server = Server(baseURL: try #require(URL(string: "https://api.example.com")))
        let client = Client(server: server, transport: mock, configuration: configuration)
        let stalled = Task { try await client.send(Timed(path: "/stalled", timeout: nil)) }
        while mock.recordedRequests.isEmpty { await Task.yield() }

        let error = try #require(
            await expectCourierError { try await client.send(Timed(path: "/late", timeout: .milliseconds(300))) })
        #expect(error.code == .timedOut)
        #expect(error.message?.contains("maxConcurrentRequests slots, and nothing was sent") == true, "\(error)")
        #expect(mock.recordedRequests.count == 1)
        stalled.cancel()
        _ = try? await stalled.value
    }

    @Test("a download keeps its slot while its body streams: a call behind it waits, and its deadline says so")
    func downloadKeepsItsSlot() async throws {
        struct Timed: Request {
            typealias Response = String
            var path: String
            var timeout: Duration?
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-slot-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let mock = MockTransport()
        mock.stub(nil, "/file", with: MockResponse(body: Data(count: 1000), fault: .stallBody(afterBytes: 10)))
        mock.stub(nil, "/late", with: .text("ok"))
        var configuration = Client.Configuration()
        configuration.maxConcurrentRequests = 1
        let server = Server(baseURL: try #require(URL(string: "https://api.example.com")))
        let client = Client(server: server, transport: mock, configuration: configuration)
        let download = Task {
            try await client.send(TransferTests.Download(destination: directory.appendingPathComponent("file")))
        }
        while mock.recordedRequests.isEmpty { await Task.yield() }

        let error = try #require(
            await expectCourierError { try await client.send(Timed(path: "/late", timeout: .milliseconds(300))) })
        #expect(error.code == .timedOut)
        #expect(error.message?.contains("maxConcurrentRequests slots") == true, "\(error)")
        #expect(mock.recordedRequests.count == 1)
        download.cancel()
        _ = try? await download.value
    }

    @Test("a client switched to another environment shares the limit; a configured one has its own")
    func derivedClients() throws {
        var configuration = Client.Configuration()
        configuration.maxConcurrentRequests = 2
        let production = Server(baseURL: try #require(URL(string: "https://api.example.com")))
        let staging = Server(baseURL: try #require(URL(string: "https://staging.example.com")), environment: "staging")
        let client = Client(
            servers: [production, staging], environment: .production, transport: MockTransport(),
            configuration: configuration)
        let limiter = try #require(client.limiter)
        #expect(client.switching(to: "staging").limiter === limiter)
        #expect(client.addingLogMetadata("operation", "list").limiter === limiter)
        #expect(client.configured { $0.maxConcurrentRequests = 4 }.limiter !== limiter)
    }
}
