import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// The number of calls in flight, as a value and as a stream.
@Suite("ActivityTracker", .timeLimit(.minutes(1)))
struct ActivityTrackerTests {
    /// A client whose `/probe` calls wait at `turnstile`, then answer `status`.
    private static func client(
        _ activity: ActivityTracker,
        _ turnstile: MonitorFixtures.Turnstile,
        status: Int = 200
    ) -> Client {
        let (client, mock) = Fixtures.client { $0.activity = activity }
        mock.stub(.get, "/probe") { _ in
            try await turnstile.pass()
            return MockResponse(status: HTTPResponse.Status(code: status), body: Data("body".utf8))
        }
        return client
    }

    @Test("two calls in flight count 2; the count returns to 0 when they succeed")
    func countsCallsInFlight() async throws {
        let activity = ActivityTracker()
        let turnstile = MonitorFixtures.Turnstile()
        let client = Self.client(activity, turnstile)
        #expect(activity.inFlight == 0)
        #expect(!activity.isActive)

        async let first = client.send(Probe())
        async let second = client.send(Probe())
        var arrivals = turnstile.arrivals.makeAsyncIterator()
        await arrivals.next()
        await arrivals.next()
        #expect(activity.inFlight == 2)
        #expect(activity.isActive)

        turnstile.release()
        #expect(try await [first, second] == ["body", "body"])
        #expect(activity.inFlight == 0)
    }

    @Test("a failed call and a cancelled call give their count back")
    func failureAndCancellation() async throws {
        let activity = ActivityTracker()
        let turnstile = MonitorFixtures.Turnstile()
        let failing = Self.client(activity, turnstile, status: 500)
        turnstile.release()
        _ = await expectCourierError { try await failing.send(Probe()) }
        #expect(activity.inFlight == 0)

        let stalled = MonitorFixtures.Turnstile()
        let client = Self.client(activity, stalled)
        let task = Task { try await client.send(Probe()) }
        var arrivals = stalled.arrivals.makeAsyncIterator()
        await arrivals.next()
        #expect(activity.inFlight == 1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(activity.inFlight == 0)
    }

    @Test("updates yields the current value, then 1 while a call is in flight, then 0")
    func updatesStream() async throws {
        let activity = ActivityTracker()
        let turnstile = MonitorFixtures.Turnstile()
        let client = Self.client(activity, turnstile)
        var updates = activity.updates.makeAsyncIterator()
        #expect(await updates.next() == 0)

        let call = Task { try await client.send(Probe()) }
        var arrivals = turnstile.arrivals.makeAsyncIterator()
        await arrivals.next()
        #expect(await updates.next() == 1)
        turnstile.release()
        _ = try await call.value
        #expect(await updates.next() == 0)
    }

    @Test("one tracker shared by two clients counts both")
    func sharedTracker() async throws {
        let activity = ActivityTracker()
        let turnstile = MonitorFixtures.Turnstile()
        let one = Self.client(activity, turnstile)
        let two = Self.client(activity, turnstile).switching(to: .production)
        async let first = one.send(Probe())
        async let second = two.send(Probe())
        var arrivals = turnstile.arrivals.makeAsyncIterator()
        await arrivals.next()
        await arrivals.next()
        #expect(activity.inFlight == 2)
        turnstile.release()
        _ = try await (first, second)
        #expect(activity.inFlight == 0)
    }
}
