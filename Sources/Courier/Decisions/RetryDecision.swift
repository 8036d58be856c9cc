public import HTTPTypes

/// Restarts the call when a response is worth retrying, a bounded number of times.
///
/// The count is real: each restart replaces this decision with one that has one retry fewer, so a call is
/// retried at most `remaining` times however the restarts interleave with other decisions. A request whose
/// body cannot be sent again is never retried. The delay before each retry is slept on the context's clock and
/// ends promptly when the task is cancelled.
///
/// By default it retries idempotent methods (GET, HEAD, OPTIONS, PUT, DELETE, TRACE) answered with 408, 429, 500,
/// 502, 503 or 504.
///
/// ```swift
/// var decisions: [any Decision] { [.retry(2, delay: { .milliseconds(500 << ($0 - 1)) }), .validateStatus()] }
/// ```
public struct RetryDecision: Decision {
    /// How many more retries are allowed.
    public let remaining: Int
    private let delay: @Sendable (_ retry: Int) -> Duration
    private let retried: Int
    private let condition: @Sendable (ReceivedResponse, DecisionContext) -> Bool

    /// Creates a retry decision.
    ///
    /// - Parameters:
    ///   - remaining: The most retries; 0 never retries.
    ///   - delay: The pause before retry `n` (1-based); default none.
    ///   - condition: Whether this response is worth retrying; default ``isRetryable(_:context:)``.
    public init(
        remaining: Int,
        delay: @escaping @Sendable (_ retry: Int) -> Duration = { _ in .zero },
        when condition: @escaping @Sendable (ReceivedResponse, DecisionContext) -> Bool = RetryDecision.isRetryable
    ) {
        self.init(remaining: remaining, retried: 0, delay: delay, condition: condition)
    }

    private init(
        remaining: Int,
        retried: Int,
        delay: @escaping @Sendable (Int) -> Duration,
        condition: @escaping @Sendable (ReceivedResponse, DecisionContext) -> Bool
    ) {
        self.remaining = max(0, remaining)
        self.retried = retried
        self.delay = delay
        self.condition = condition
    }

    /// `retry`.
    public var name: String { "retry" }

    /// Applies when retries are left, the body can be sent again, and the condition holds.
    public func shouldApply(to response: ReceivedResponse, context: DecisionContext) -> Bool {
        remaining > 0 && context.canResendBody && condition(response, context)
    }

    /// Waits, then restarts with one retry fewer.
    public func decide(_ response: ReceivedResponse, context: DecisionContext) async throws -> DecisionAction {
        let pause = delay(retried + 1)
        if pause > .zero {
            try await context.clock.sleep(for: pause, tolerance: nil)
        }
        let successor = RetryDecision(
            remaining: remaining - 1,
            retried: retried + 1,
            delay: delay,
            condition: condition
        )
        return .restart(with: context.decisions(replacingCurrentWith: successor))
    }

    /// The methods retried by default: those RFC 9110 §9.2.2 defines as idempotent.
    public static let idempotentMethods: Set<HTTPRequest.Method> = [.get, .head, .options, .put, .delete, .trace]

    /// The statuses retried by default.
    public static let retryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]

    /// An idempotent method answered with a retryable status.
    @Sendable
    public static func isRetryable(_ response: ReceivedResponse, context: DecisionContext) -> Bool {
        idempotentMethods.contains(context.request.method) && retryableStatuses.contains(response.status.code)
    }
}

extension Decision where Self == RetryDecision {
    /// Retries up to `count` times (see ``RetryDecision``).
    public static func retry(
        _ count: Int,
        delay: @escaping @Sendable (_ retry: Int) -> Duration = { _ in .zero },
        when condition: @escaping @Sendable (ReceivedResponse, DecisionContext) -> Bool = RetryDecision.isRetryable
    ) -> RetryDecision {
        RetryDecision(remaining: count, delay: delay, when: condition)
    }
}
