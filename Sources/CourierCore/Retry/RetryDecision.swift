public import HTTPTypes

/// Applies a ``RetryPolicy``: restarts the call when a response (or a transport failure) is worth retrying.
///
/// The count is real: each restart replaces this decision with one that has one retry fewer, so a call is
/// retried at most ``RetryPolicy/maxRetries`` times however the restarts interleave with other decisions. A
/// request whose body cannot be sent again is never retried. The pause before each retry is the larger of the
/// policy's backoff and the server's `Retry-After`, slept on the context's clock; it ends promptly when the task is
/// cancelled, and a pause that would pass the call's deadline is not taken (the response goes on down the chain).
///
/// ```swift
/// var decisions: [any Decision] { [.retry(2, delay: { .milliseconds(500 << ($0 - 1)) }), .validateStatus()] }
/// ```
public struct RetryDecision: Decision, TransportFailureDecision {
    /// The policy applied.
    public let policy: RetryPolicy
    private let retried: Int
    /// The lowest of the policy's retryable statuses: a response below it (every success, with the default policy) is
    /// not looked up in the set, whose hashing every call paid (issue #17).
    private let lowestRetryableStatus: Int
    /// Whether the policy's ``RetryPolicy/condition`` is the whole rule, method included (``init(remaining:delay:when:)``,
    /// whose condition says which responses are worth retrying), or replaces only the status check (a policy's).
    private let conditionCoversMethod: Bool

    /// Creates a decision applying `policy`.
    public init(policy: RetryPolicy) {
        self.init(policy: policy, retried: 0, conditionCoversMethod: false)
    }

    /// Creates a decision that retries up to `remaining` times.
    ///
    /// - Parameters:
    ///   - remaining: The most retries; 0 never retries.
    ///   - delay: The pause before retry `n` (1-based); default none.
    ///   - condition: Whether this response is worth retrying; default: an idempotent method answered with 408,
    ///     429, 500, 502, 503 or 504, and any method answered with a first 408.
    public init(
        remaining: Int,
        delay: @escaping @Sendable (_ retry: Int) -> Duration = { _ in .zero },
        when condition: (@Sendable (ReceivedResponse, DecisionContext) -> Bool)? = nil
    ) {
        self.init(
            policy: RetryPolicy(maxRetries: remaining, backoff: RetryPolicy.Backoff(delay), condition: condition),
            retried: 0,
            conditionCoversMethod: condition != nil
        )
    }

    private init(policy: RetryPolicy, retried: Int, conditionCoversMethod: Bool) {
        self.policy = policy
        self.retried = retried
        self.conditionCoversMethod = conditionCoversMethod
        self.lowestRetryableStatus = policy.retryableStatuses.min() ?? .max
    }

    /// How many more retries are allowed.
    public var remaining: Int { max(0, policy.maxRetries - retried) }

    /// `retry`.
    public var name: String { "retry" }

    /// Applies when retries are left, the body can be sent again, the call may restart once more
    /// (``DecisionContext/canRestart``), the method allows it, and the response is worth retrying.
    public func shouldApply(to response: ReceivedResponse, context: DecisionContext) -> Bool {
        guard remaining > 0, context.canResendBody, context.canRestart else { return false }
        if let condition = policy.condition {
            // A policy's condition replaces the status check only: a POST is still not retried without an
            // idempotency key, as the policy promises.
            return (conditionCoversMethod || policy.allowsRetry(of: context.request)) && condition(response, context)
        }
        let code = response.status.code
        guard code >= lowestRetryableStatus, policy.retryableStatuses.contains(code) else { return false }
        if Self.isFirstRequestTimeout(code, retried: retried, policy: policy) { return true }
        return policy.allowsRetry(of: context.request)
    }

    /// Waits (backoff, `Retry-After`), then restarts with one retry fewer. When the server asks for a longer wait
    /// than ``RetryPolicy/maxRetryAfter``, fails at once with the error a ``ValidateStatusDecision`` later in the
    /// chain gives the response (its decoded API error kept), the wait added to its message; without such a check (a
    /// request that reads every status itself, a generated OpenAPI client), the response goes on as it is.
    public func decide(_ response: ReceivedResponse, context: DecisionContext) async throws -> DecisionAction {
        var pause = policy.backoff.delay(forRetry: retried + 1)
        if let asked = RetryAfter.delay(in: response.head) {
            guard asked <= policy.maxRetryAfter else {
                guard let failure = tooLongToWait(asked, response: response, context: context) else {
                    return .continue(with: response)
                }
                return .fail(failure)
            }
            pause = max(pause, asked)
        }
        guard Self.fits(pause, before: context.deadlineMoment) else { return .continue(with: response) }
        return try await retry(after: pause, context: context)
    }

    /// Restarts after a transport failure the policy retries, when retries are left and the request may be sent
    /// again (an idempotent method, an idempotency key, or a failure that proves nothing was sent). The first retry after ``CourierError/Code/connectionReset`` (a stale keep-alive connection) takes no
    /// pause.
    public func recover(from error: any Error, context: DecisionContext) async throws -> DecisionAction? {
        guard remaining > 0, context.canResendBody, context.canRestart,
            policy.allowsRetry(of: context.request, after: error), policy.retries(error, context: context)
        else { return nil }
        let staleConnection = retried == 0 && (error as? CourierError)?.code == .connectionReset
        let pause = staleConnection ? .zero : policy.backoff.delay(forRetry: retried + 1)
        guard Self.fits(pause, before: context.deadlineMoment) else { return nil }
        return try await retry(after: pause, context: context)
    }

    /// The failure for a `Retry-After` of `asked`, above ``RetryPolicy/maxRetryAfter``: the error the status check
    /// later in the chain gives this response (with the server's decoded API error), the wait it asks for added to its
    /// message; `nil` when no check fails it (none follows, or it lets this status pass): the response is the caller's.
    private func tooLongToWait(
        _ asked: Duration, response: ReceivedResponse, context: DecisionContext
    ) -> CourierError? {
        let reason =
            "asks to retry after \(Self.seconds(asked)), longer than the \(Self.seconds(policy.maxRetryAfter)) this "
            + "client waits"
        let check = context.decisions.dropFirst(context.index + 1).lazy
            .compactMap { $0 as? any StatusFailureDescribing }.first
        guard var failure = check?.failure(for: response, context: context) else { return nil }
        failure.message = (failure.message ?? "the server answered \(response.status.code)") + ", and " + reason
        return failure
    }

    private func retry(after pause: Duration, context: DecisionContext) async throws -> DecisionAction {
        context.events?.emit(.retried(delay: pause), attempt: context.attempt)
        try await context.pause(for: pause)
        let successor = RetryDecision(
            policy: policy, retried: retried + 1, conditionCoversMethod: conditionCoversMethod)
        return .restart(with: context.decisions(replacingCurrentWith: successor))
    }

    private static func fits(_ pause: Duration, before deadline: Moment?) -> Bool {
        guard let deadline else { return true }
        return Moment.now.advanced(by: pause) < deadline
    }

    private static func seconds(_ duration: Duration) -> String {
        "\(duration.components.seconds) s"
    }

    /// The methods retried by default: those RFC 9110 §9.2.2 defines as idempotent.
    public static let idempotentMethods: Set<HTTPRequest.Method> = [.get, .head, .options, .put, .delete, .trace]

    /// The statuses retried by default.
    public static let retryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]

    /// The default rule: an idempotent method (or one with an idempotency key) answered with a retryable status, or
    /// any method answered with a first 408.
    public static func isRetryable(_ response: ReceivedResponse, context: DecisionContext) -> Bool {
        let code = response.status.code
        guard retryableStatuses.contains(code) else { return false }
        return isFirstRequestTimeout(code, retried: context.attempt - 1, policy: .default)
            || RetryPolicy.default.allowsRetry(of: context.request)
    }

    /// Whether `code` is a 408 that any method is retried for: the server did not receive the whole request (RFC 9110
    /// §15.5.9: the client MAY repeat it; HAProxy and Node answer so on a reused idle connection), so it is retried
    /// once, as OkHttp does, under a policy that retries requests known unsent
    /// (``RetryPolicy/retriesUnsentRequests``). A second 408, for a method the policy does not retry, is the answer.
    private static func isFirstRequestTimeout(_ code: Int, retried: Int, policy: RetryPolicy) -> Bool {
        code == 408 && retried == 0 && policy.retriesUnsentRequests
    }
}

/// A decision that can also handle a failure with no response (a lost connection, a timeout).
///
/// When the transport throws, Courier asks the first such decision in the chain:
/// - `.restart` runs the call again, to its `redirection` when it has one (a fail-over to another host), under the
///   same rules as a restart after a response (``Client/Configuration/maxRestarts``, no one-shot body sent twice);
/// - `.fail` ends the call with its error instead of the transport's;
/// - `nil`, `.continue` and `.done` let the failure through: there is no response to go on with or to parse.
public protocol TransportFailureDecision: Decision {
    /// What to do about `error`, or `nil` to let it fail the call.
    func recover(from error: any Error, context: DecisionContext) async throws -> DecisionAction?
}

extension Decision where Self == RetryDecision {
    /// Retries up to `count` times (see ``RetryDecision``).
    public static func retry(
        _ count: Int,
        delay: @escaping @Sendable (_ retry: Int) -> Duration = { _ in .zero },
        when condition: (@Sendable (ReceivedResponse, DecisionContext) -> Bool)? = nil
    ) -> RetryDecision {
        RetryDecision(remaining: count, delay: delay, when: condition)
    }

    /// Applies `policy` (see ``RetryPolicy``).
    public static func retry(_ policy: RetryPolicy) -> RetryDecision {
        RetryDecision(policy: policy)
    }
}

extension RetryDecision {
    /// `decisions` with a decision applying `policy` before the first status check among them (a
    /// ``ValidateStatusDecision``), or at the end: after a status check, a 503 or a 429 fails the call before it can
    /// be retried, and the policy would retry transport failures only.
    static func chain(_ decisions: [any Decision], retrying policy: RetryPolicy) -> [any Decision] {
        var decisions = decisions
        let check = decisions.firstIndex { $0 is any StatusFailureDescribing } ?? decisions.endIndex
        decisions.insert(RetryDecision(policy: policy), at: check)
        return decisions
    }
}
