import Foundation
import HTTPTypes
import Testing

@testable import CourierURLSession

#if canImport(FoundationNetworking)
    import FoundationNetworking

    @Suite("URLSession lane pool")
    struct LanePoolTests {
        @Test("idle sessions are reused, most recent first, and closed once idle for longer than the idle time")
        func idleLanesExpire() async throws {
            let pool = LanePool(configuration: .ephemeral, maxLanes: 4, maxIdleLanes: 4, maxIdleTime: .seconds(60))
            defer { pool.shutDown(failing: CancellationError()) }
            let first = try await pool.checkOut(deadline: nil)
            let second = try await pool.checkOut(deadline: nil)
            let third = try await pool.checkOut(deadline: nil)
            let start = ContinuousClock.now
            pool.checkIn(first, now: start)
            pool.checkIn(second, now: start + .seconds(1))
            // Within the idle time: all three are kept.
            pool.checkIn(third, now: start + .seconds(30))
            #expect(pool.idleCount == 3)

            let reused = try await pool.checkOut(deadline: nil)
            #expect(reused === third, "the most recently used session (its connection is the likeliest to be open)")
            // 61 s after the first two went idle: they are closed, the lane checked in now is kept.
            pool.checkIn(reused, now: start + .seconds(61.5))
            #expect(pool.idleCount == 1)
            let last = try await pool.checkOut(deadline: nil)
            #expect(last === third)
        }

        @Test("a session idle for longer than the idle time is not handed out again: it is closed, and a new one made")
        func anExpiredLaneIsNotReused() async throws {
            let pool = LanePool(configuration: .ephemeral, maxLanes: 4, maxIdleLanes: 4, maxIdleTime: .seconds(60))
            defer { pool.shutDown(failing: CancellationError()) }
            let first = try await pool.checkOut(deadline: nil)
            let second = try await pool.checkOut(deadline: nil)
            let start = ContinuousClock.now
            pool.checkIn(first, now: start)
            pool.checkIn(second, now: start + .seconds(10))
            #expect(pool.idleCount == 2)
            // 65 s later, no request has ended in between: the first has been idle too long, the second not yet.
            let reused = try await pool.checkOut(deadline: nil, now: start + .seconds(65))
            #expect(reused === second)
            #expect(pool.idleCount == 0)
            // Both idle for longer than the idle time: neither comes back.
            pool.checkIn(reused, now: start + .seconds(66))
            let fresh = try await pool.checkOut(deadline: nil, now: start + .seconds(130))
            #expect(fresh !== first && fresh !== second)
            #expect(pool.idleCount == 0)
        }

        @Test("a fresh check-out (a POST) gets a session that never sent a request, also after waiting for one")
        func aFreshCheckOutGetsANewLane() async throws {
            let pool = LanePool(configuration: .ephemeral, maxLanes: 1, maxIdleLanes: 1, maxIdleTime: .seconds(60))
            defer { pool.shutDown(failing: CancellationError()) }
            let used = try await pool.checkOut(deadline: nil)
            pool.checkIn(used)
            // The idle lane (and its connection) is left for a request that may reuse it.
            let fresh = try await pool.checkOut(deadline: nil, fresh: true)
            #expect(fresh !== used)
            #expect(pool.idleCount == 1)
            // With `maxLanes` busy, a fresh request waits; the lane handed over to it is replaced by a new one.
            let waiter = Task { try await pool.checkOut(deadline: nil, fresh: true) }
            while pool.waitingCount == 0 { await Task.yield() }
            pool.checkIn(fresh)
            let next = try await waiter.value
            #expect(next !== fresh && next !== used)
            #expect(pool.idleCount == 1)
            // The replaced lane no longer counts as busy: once `next` is back, a fresh request need not wait.
            pool.checkIn(next)
            let another = try await pool.checkOut(deadline: .now + .seconds(5), fresh: true)
            #expect(another !== next && another !== used)
            pool.checkIn(another)
            #expect(try await pool.checkOut(deadline: nil) === used)
        }

        @Test("POST and PATCH need a new connection on Linux, unless they carry an Idempotency-Key")
        func freshConnectionRule() {
            func head(_ method: HTTPRequest.Method, _ fields: HTTPFields = [:]) -> HTTPRequest {
                HTTPRequest(method: method, scheme: "http", authority: "127.0.0.1", path: "/", headerFields: fields)
            }
            for method: HTTPRequest.Method in [.get, .head, .put, .delete, .options] {
                #expect(!URLSessionTransport.needsFreshConnection(head(method)), "\(method)")
            }
            #expect(URLSessionTransport.needsFreshConnection(head(.post)))
            #expect(URLSessionTransport.needsFreshConnection(head(.patch)))
            #expect(!URLSessionTransport.needsFreshConnection(head(.post, [HTTPField.Name("Idempotency-Key")!: "k1"])))
            #expect(URLSessionTransport.needsFreshConnection(head(.patch, [HTTPField.Name("Idempotency-Key")!: ""])))
        }
    }
#endif
