import HTTPTypes
import Testing

@testable import CourierCore

/// `Moment` stands in for `ContinuousClock.Instant` inside Courier's per-call values (issue #17); the public API
/// still speaks `ContinuousClock.Instant`, and must give back exactly the instant it was given.
@Suite("Moment")
struct MomentTests {
    @Test("an instant converts to a moment and back unchanged, before and after the origin")
    func roundTrip() {
        let now = ContinuousClock.now
        for instant in [now, now + .nanoseconds(1), now - .seconds(3_600), now + .seconds(86_400 * 365)] {
            #expect(Moment(instant).instant == instant)
        }
    }

    @Test("moments order, subtract and advance as their instants do")
    func arithmetic() {
        let instant = ContinuousClock.now
        let earlier = Moment(instant)
        let later = Moment(instant + .milliseconds(250))
        #expect(earlier < later)
        #expect(!(later < earlier))
        #expect(later - earlier == .milliseconds(250))
        #expect(earlier.advanced(by: .milliseconds(250)) == later)
        #expect(earlier.advanced(by: .milliseconds(250)).instant == instant + .milliseconds(250))
    }

    @Test("a transport context's deadline reads back as set, through the initializer and the setter")
    func transportContextDeadline() {
        let deadline = ContinuousClock.now + .seconds(5)
        var context = TransportContext(deadline: deadline)
        #expect(context.deadline == deadline)
        context.deadline = deadline + .seconds(1)
        #expect(context.deadline == deadline + .seconds(1))
        context.deadline = nil
        #expect(context.deadline == nil)
        #expect(TransportContext().deadline == nil)
    }

    @Test("a decision context's deadline reads back as set, through the initializer and the setter")
    func decisionContextDeadline() {
        let deadline = ContinuousClock.now + .seconds(5)
        var context = DecisionContext(
            request: HTTPRequest(method: .get, scheme: "https", authority: "a.test", path: "/"), deadline: deadline)
        #expect(context.deadline == deadline)
        context.deadline = nil
        #expect(context.deadline == nil)
        context.deadline = deadline
        #expect(context.deadlineMoment == Moment(deadline))
    }
}
