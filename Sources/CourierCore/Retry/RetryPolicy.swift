import Foundation
public import HTTPTypes

/// When and how a failed call is tried again: how many times, after what pause, for which statuses and errors.
///
/// The client applies its policy (``Client/Configuration/retryPolicy``, ``default`` unless changed) as a
/// ``RetryDecision`` after the redirect and token-refresh decisions; a request overrides it with
/// ``Request/retryPolicy``. The defaults follow Alamofire and urllib3:
///
/// - at most 2 retries, after an exponential pause from 0.5 s (doubling, capped at 30 s) with full jitter;
/// - statuses 408, 429, 500, 502, 503, 504, and the transport failures in ``defaultRetryableErrors`` (refused,
///   reset or unreachable connections, connect timeouts, a body cut short); never cancellation, idle timeouts,
///   TLS failures, malformed responses, size limits, the call's own deadline, or any other 4xx;
/// - a connection reset before any response (typically a pooled keep-alive connection the server had closed) is
///   retried at once the first time, without a pause: it says nothing about the server's load;
/// - idempotent methods only (GET, HEAD, OPTIONS, PUT, DELETE, TRACE), unless the request carries an
///   `Idempotency-Key` header, which it then sends unchanged on every attempt, or the failure proves that nothing
///   was sent (``CourierError/isKnownUnsent``: a refused connection, no route, a connect timeout on AsyncHTTPClient), as OkHttp and
///   urllib3 retry a failed connection for any method, or the response is a first 408 (the server did not receive
///   the whole request, RFC 9110 §15.5.9; retried once for any method, as OkHttp does; both follow
///   ``retriesUnsentRequests``);
/// - a `Retry-After` (seconds, or an HTTP date relative to the response's `Date`; the longest of several) is
///   honoured: never retry earlier;
///   a value above ``maxRetryAfter`` fails the call at once with the value in the error (the status check's
///   `unacceptableStatus`, with the server's decoded API error, when the chain has one); garbage is ignored;
/// - a one-shot body is never replayed, and a retry whose pause would pass the call's deadline is not made.
///
/// There is one retry mechanism per call: the client's policy, unless the request states its own, either as
/// ``Request/retryPolicy`` or as a ``RetryDecision`` among its ``Request/decisions`` (which then replaces the
/// client's, where the request put it in its chain, or before the client's status check when the client's decisions
/// have one, so that the check does not fail a 503 before the retry sees it). Retries never multiply, and the attempts in the decision trace
/// are the requests the server saw.
///
/// ```swift
/// var retryPolicy: RetryPolicy? { RetryPolicy(maxRetries: 5, retryableStatuses: [503]) }
/// ```
public struct RetryPolicy: Sendable {
    /// The most retries per call (attempts = retries + 1).
    public var maxRetries: Int
    /// The pause before each retry.
    public var backoff: Backoff
    /// Statuses worth retrying.
    public var retryableStatuses: Set<Int>
    /// Methods retried without an idempotency key.
    public var retryableMethods: Set<HTTPRequest.Method>
    /// A header whose presence makes any method retryable (default `Idempotency-Key`); `nil` disables that.
    public var idempotencyKeyHeader: HTTPField.Name?
    /// Whether transport failures (no usable response) are retried at all.
    public var retriesTransportFailures: Bool
    /// Whether a retryable transport failure that proves nothing was sent (``CourierError/isKnownUnsent``: the
    /// connection was refused, had no route, or timed out connecting) is retried whatever the method, as OkHttp and
    /// urllib3 do (default `true`). The server never saw the request, so a `POST` cannot be applied twice. A first
    /// `408 Request Timeout` (the server did not receive the whole request) is retried so too.
    public var retriesUnsentRequests: Bool
    /// The transport failures worth retrying, by code. Default: ``defaultRetryableErrors``.
    public var retryableErrors: Set<CourierError.Code>
    /// An extra rule replacing the code check for transport failures: whether this error is worth retrying.
    public var errorCondition: (@Sendable (any Error, DecisionContext) -> Bool)?
    /// The longest `Retry-After` honoured; a longer one fails the call at once.
    public var maxRetryAfter: Duration
    /// An extra rule replacing the status check: whether this response is worth retrying. The method check stays:
    /// a request that is not idempotent (and carries no idempotency key) is not retried whatever it says, and the
    /// first-408 rule no longer applies.
    public var condition: (@Sendable (ReceivedResponse, DecisionContext) -> Bool)?

    /// Creates a policy; every parameter has the default described on the type.
    public init(
        maxRetries: Int = 2,
        backoff: Backoff = .exponential(),
        retryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504],
        retryableMethods: Set<HTTPRequest.Method> = [.get, .head, .options, .put, .delete, .trace],
        idempotencyKeyHeader: HTTPField.Name? = HTTPField.Name("Idempotency-Key"),
        retriesTransportFailures: Bool = true,
        retriesUnsentRequests: Bool = true,
        retryableErrors: Set<CourierError.Code> = RetryPolicy.defaultRetryableErrors,
        maxRetryAfter: Duration = .seconds(120),
        condition: (@Sendable (ReceivedResponse, DecisionContext) -> Bool)? = nil,
        errorCondition: (@Sendable (any Error, DecisionContext) -> Bool)? = nil
    ) {
        self.maxRetries = max(0, maxRetries)
        self.backoff = backoff
        self.retryableStatuses = retryableStatuses
        self.retryableMethods = retryableMethods
        self.idempotencyKeyHeader = idempotencyKeyHeader
        self.retriesTransportFailures = retriesTransportFailures
        self.retriesUnsentRequests = retriesUnsentRequests
        self.retryableErrors = retryableErrors
        self.maxRetryAfter = maxRetryAfter
        self.condition = condition
        self.errorCondition = errorCondition
    }

    /// The transport failures retried by default: the connection was refused, reset, unreachable or failed in
    /// an unclassified way; no connection within the connect timeout; the body was cut short.
    ///
    /// Not retried: an idle timeout (the server took the request and went silent: each retry would add the whole
    /// timeout again, as OkHttp does not recover a read timeout either), a host name that does not resolve and a device with no network (a pause does not fix those,
    /// and the user should hear about them at once), TLS failures (a certificate does not fix itself), malformed
    /// responses, size limits, and the call's deadline.
    public static let defaultRetryableErrors: Set<CourierError.Code> = [
        .connectionFailed, .connectionRefused, .connectionReset, .networkUnreachable, .connectTimeout,
        .truncatedResponse,
    ]

    /// Whether this policy retries a transport failure `error` (by code, or by ``errorCondition``).
    public func retries(_ error: any Error, context: DecisionContext) -> Bool {
        guard retriesTransportFailures else { return false }
        if error is CancellationError { return false }
        if let errorCondition { return errorCondition(error, context) }
        guard let error = error as? CourierError else { return false }
        return retryableErrors.contains(error.code)
    }

    /// 2 retries with exponential backoff and full jitter (see the type's description).
    public static let `default` = RetryPolicy()

    /// Never retry.
    public static let disabled = RetryPolicy(maxRetries: 0)

    /// Whether `request` may be sent again after the transport failure `error`: its method allows a retry
    /// (``allowsRetry(of:)``), or `error` proves that nothing was sent and ``retriesUnsentRequests`` is on.
    public func allowsRetry(of request: HTTPRequest, after error: any Error) -> Bool {
        if retriesUnsentRequests, let error = error as? CourierError, error.isKnownUnsent { return true }
        return allowsRetry(of: request)
    }

    /// Whether `request`'s method may be retried: idempotent, or carrying an idempotency key.
    public func allowsRetry(of request: HTTPRequest) -> Bool {
        if retryableMethods.contains(request.method) { return true }
        guard let idempotencyKeyHeader, let key = request.headerFields[idempotencyKeyHeader] else { return false }
        return !key.isEmpty
    }

    /// Whether a transport failure is one the default policy retries (see ``defaultRetryableErrors``).
    public static func isTransient(_ error: any Error) -> Bool {
        guard let error = error as? CourierError else { return false }
        return defaultRetryableErrors.contains(error.code)
    }

    /// The pause before a retry.
    public struct Backoff: Sendable {
        private let compute: @Sendable (_ retry: Int) -> Duration

        /// A pause computed from the 1-based retry number.
        public init(_ compute: @escaping @Sendable (_ retry: Int) -> Duration) { self.compute = compute }

        /// The pause before retry `retry` (1-based).
        public func delay(forRetry retry: Int) -> Duration { compute(retry) }

        /// No pause.
        public static let none = Backoff { _ in .zero }

        /// The same pause before every retry.
        public static func constant(_ delay: Duration) -> Backoff { Backoff { _ in delay } }

        /// `initial × multiplier^(retry−1)`, capped at `maximum`; with `jitter`, a uniformly random pause between
        /// zero and that value ("full jitter", which spreads retries of many clients apart).
        public static func exponential(
            initial: Duration = .milliseconds(500),
            multiplier: Double = 2,
            maximum: Duration = .seconds(30),
            jitter: Bool = true
        ) -> Backoff {
            Backoff { retry in
                guard initial > .zero else { return .zero }
                let factor = pow(max(1, multiplier), Double(max(0, retry - 1)))
                // Compared in seconds before converting back: `initial * factor` traps once it passes what a
                // `Duration` holds (retry 70 of the defaults), and `factor` may be infinite.
                let seconds = Double(initial.components.seconds) + Double(initial.components.attoseconds) * 1e-18
                let maximumSeconds =
                    Double(maximum.components.seconds) + Double(maximum.components.attoseconds) * 1e-18
                let ceiling = seconds * factor < maximumSeconds ? initial * factor : maximum
                guard jitter else { return ceiling }
                return ceiling * Double.random(in: 0...1)
            }
        }
    }
}
