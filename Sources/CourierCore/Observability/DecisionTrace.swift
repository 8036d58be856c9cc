/// The path one call took through Courier: every adapter and decision that ran, per attempt, and the parse.
///
/// Its description is the bracketed part of a log line, without the adapters:
/// `validateStatus ✓ → parse ✓`, after a token refresh `refreshToken ↻ restart → validateStatus ✓ → parse ✓`,
/// and from the cache `cache hit → validateStatus ✓ → parse ✓`.
public struct DecisionTrace: Hashable, Sendable, CustomStringConvertible {
    /// One step of the trace.
    public struct Step: Hashable, Sendable {
        /// What kind of part ran.
        public enum Kind: Hashable, Sendable {
            /// An adapter shaped the request.
            case adapter
            /// A decision looked at the response.
            case decision
            /// The parser produced the value.
            case parse
            /// The cache was consulted; the name says what it did (``CacheStatus/description``: `cache hit`,
            /// `cache revalidated`, `cache stale`, `cache miss`).
            case cache
        }

        /// How the step ended.
        public enum Outcome: Hashable, Sendable {
            /// The part did its work and the pipeline went on.
            case succeeded
            /// The decision restarted the call.
            case restarted
            /// The decision ended the chain early; the response went to parsing.
            case finished
            /// The part failed the call.
            case failed
        }

        /// What kind of part ran.
        public var kind: Kind
        /// The part's name.
        public var name: String
        /// How it ended.
        public var outcome: Outcome
        /// The 1-based attempt it ran in.
        public var attempt: Int

        /// Creates a step.
        public init(kind: Kind, name: String, outcome: Outcome, attempt: Int) {
            self.kind = kind
            self.name = name
            self.outcome = outcome
            self.attempt = attempt
        }
    }

    /// The steps, in order.
    public private(set) var steps: [Step] = []

    /// Creates an empty trace.
    public init() {}

    /// Whether nothing has been recorded.
    public var isEmpty: Bool { steps.isEmpty }

    /// Appends a step.
    public mutating func record(_ kind: Step.Kind, _ name: String, _ outcome: Step.Outcome, attempt: Int) {
        // A call records about eight steps (adapters, decisions, the parse): one buffer for them, not a regrowth
        // at 1, 2 and 4.
        if steps.isEmpty { steps.reserveCapacity(8) }
        steps.append(Step(kind: kind, name: name, outcome: outcome, attempt: attempt))
    }

    /// The names of the decisions and the parse, in order (for assertions).
    public var decisionNames: [String] {
        steps.filter { $0.kind == .decision || $0.kind == .parse }.map(\.name)
    }

    /// The names of the adapters that ran in `attempt`.
    public func adapterNames(attempt: Int) -> [String] {
        steps.filter { $0.kind == .adapter && $0.attempt == attempt }.map(\.name)
    }

    /// Decisions and parse, such as `retry ↻ restart → validateStatus ✓ → parse ✓`.
    public var description: String {
        steps.lazy.filter { $0.kind != .adapter }.map { step in
            if step.kind == .cache { return step.name }
            return switch step.outcome {
            case .succeeded, .finished: "\(step.name) ✓"
            case .restarted: "\(step.name) ↻ restart"
            case .failed: "\(step.name) ✗"
            }
        }.joined(separator: " → ")
    }
}
