/// Whether a response came from the cache, how old it is, and whether it is stale.
///
/// Decisions and parsers read it from ``ReceivedResponse/cacheStatus``; callers get it with
/// ``Client/sendWithCacheStatus(_:)``. It is `nil` when the client has no cache or the request bypasses it.
public struct CacheStatus: Hashable, Sendable, CustomStringConvertible {
    /// Where the response came from.
    public enum Outcome: String, Hashable, Sendable {
        /// From the network; the cache had nothing usable (it may have stored the response).
        case miss
        /// A fresh stored response, served without the network.
        case hit
        /// A stored response the origin confirmed with `304 Not Modified` (its headers merged in).
        case revalidated
        /// A stale stored response: `stale-while-revalidate`, `stale-if-error`, offline, or a policy that
        /// accepts stale entries.
        case stale
    }

    /// Where the response came from.
    public var outcome: Outcome
    /// The response's age (RFC 9111 §4.2.3) when it was served; zero for a miss.
    public var age: Duration

    /// Creates a status.
    public init(outcome: Outcome, age: Duration = .zero) {
        self.outcome = outcome
        self.age = age
    }

    /// Whether the body came from the cache (a hit, a revalidated or a stale entry).
    public var isFromCache: Bool { outcome != .miss }

    /// Whether the response was served although it is stale.
    public var isStale: Bool { outcome == .stale }

    /// The name in the decision trace, such as `cache hit`.
    public var description: String { "cache \(outcome.rawValue)" }
}
