/// A point on `ContinuousClock`, stored as its distance from a point fixed when the process first asks.
///
/// `ContinuousClock.Instant` is not `@frozen`: its size and layout are known only at run time. Every Courier value
/// that stored one (a call's start and deadline, the contexts and call events that carry them) was therefore copied,
/// destroyed and kept in async frames through value witnesses and runtime metadata lookups, on every call (issue
/// #17's profile: `getEnumTagSinglePayload for CallEvents`, `type metadata accessor for TransportContext`). A
/// `Duration` is frozen, so a value holding a `Moment` has a layout known when compiling.
///
/// Public API keeps `ContinuousClock.Instant`; a `Moment` converts at the boundary (``init(_:)``, ``instant``).
struct Moment: Comparable, Sendable {
    /// The distance from ``origin``.
    var offset: Duration

    /// The instant every `Moment` is measured from: the first time one is made.
    private static let origin = ContinuousClock.now

    init(offset: Duration) {
        self.offset = offset
    }

    /// The moment of `instant`.
    init(_ instant: ContinuousClock.Instant) {
        offset = instant - Self.origin
    }

    /// Now, on the continuous clock.
    static var now: Moment { Moment(ContinuousClock.now) }

    /// This moment as an instant of `ContinuousClock`.
    var instant: ContinuousClock.Instant { Self.origin.advanced(by: offset) }

    /// The moment `duration` after this one.
    func advanced(by duration: Duration) -> Moment {
        Moment(offset: offset + duration)
    }

    /// The time from `earlier` to `later`.
    static func - (later: Moment, earlier: Moment) -> Duration {
        later.offset - earlier.offset
    }

    static func < (lhs: Moment, rhs: Moment) -> Bool {
        lhs.offset < rhs.offset
    }
}
