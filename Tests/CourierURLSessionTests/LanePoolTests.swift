import Foundation
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
    }
#endif
