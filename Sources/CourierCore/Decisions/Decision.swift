public import Foundation
public import HTTPTypes
public import Logging

/// One step in handling a response: look at it and continue, restart, fail or finish.
///
/// Decisions run in order after the transport returns: the client's (``Client/Configuration/decisions``) first,
/// then the request's (``Request/decisions``). Each one whose ``shouldApply(to:context:)`` is true gets to
/// ``decide(_:context:)``:
///
/// - ``DecisionAction/continue(with:)``: pass a (possibly changed) response to the next decision;
/// - ``DecisionAction/restart(with:redirection:)``: run the call again from the adapters, with this list of decisions;
/// - ``DecisionAction/fail(_:)``: end the call with an error;
/// - ``DecisionAction/done(with:)``: skip the remaining decisions and parse this response.
///
/// When the last decision continues, the response goes to the request's parser. Every decision taken is
/// recorded in the ``DecisionTrace``; restarts are bounded by ``Client/Configuration/maxRestarts``.
///
/// A decision that counts (retries left, refreshes done) keeps its count in its own value and restarts with a
/// list where it is replaced by its successor: see ``DecisionContext/decisions(replacingCurrentWith:)``.
public protocol Decision: Sendable {
    /// A short name for the trace and logs, such as `validateStatus`.
    var name: String { get }

    /// Whether this decision looks at `response` at all. Default: `true`.
    func shouldApply(to response: ReceivedResponse, context: DecisionContext) -> Bool

    /// Decides what happens next.
    ///
    /// - Throws: An error fails the call at the ``CourierError/Stage/decide`` stage, as ``DecisionAction/fail(_:)``
    ///   would; `CancellationError` ends it as cancelled.
    func decide(_ response: ReceivedResponse, context: DecisionContext) async throws -> DecisionAction

    /// Not API: Courier's own decisions that never wait (``ValidateStatusDecision``) decide here, synchronously;
    /// every other decision keeps the default, which returns `nil`, and is run with its `async`
    /// `decide(_:context:)`. An asynchronous call through the protocol costs a call two frames from its task's
    /// allocator and looks the current task up for each (issue #17).
    func _decideWithoutWaiting(_ response: ReceivedResponse, context: DecisionContext) throws -> DecisionAction?
}

extension Decision {
    /// Applies to every response.
    public func shouldApply(to response: ReceivedResponse, context: DecisionContext) -> Bool { true }

    /// `nil`: the decision runs with `decide(_:context:)`.
    public func _decideWithoutWaiting(_ response: ReceivedResponse, context: DecisionContext) throws
        -> DecisionAction?
    {
        nil
    }
}

/// What a decision wants to happen next.
public enum DecisionAction: Sendable {
    /// Go on to the next decision with this response.
    case `continue`(with: ReceivedResponse)
    /// Run the call again from the adapters, with these decisions, optionally to a new target (a redirect).
    case restart(with: [any Decision], redirection: Redirection? = nil)
    /// End the call with this error.
    case fail(any Error)
    /// Skip the remaining decisions and parse this response.
    case done(with: ReceivedResponse)
}

/// Where a restarted call goes instead of its request's own URL: the target of a redirect.
///
/// The next attempt resolves to ``url`` and runs the adapters again (so the bearer adapter sees the new origin
/// and attaches nothing outside its own), then Courier applies the redirection: ``method``, and the body and its
/// content headers dropped when ``dropsBody``. Once a redirection ``stripsCredentials``, every later attempt of
/// the call is sent without sensitive headers (`Authorization`, `Proxy-Authorization`, `Cookie`, `Cookie2`, and
/// every header the client's ``Redactor`` treats as sensitive), whatever the adapters add.
public struct Redirection: Hashable, Sendable {
    /// The absolute target URL, with its query.
    public var url: URL
    /// The method of the redirected request.
    public var method: HTTPRequest.Method
    /// Whether the body and its content headers are dropped (303, and 301/302 after a POST).
    public var dropsBody: Bool
    /// Whether sensitive headers are stripped, for this and every later attempt of the call.
    public var stripsCredentials: Bool

    /// Creates a redirection.
    public init(url: URL, method: HTTPRequest.Method, dropsBody: Bool, stripsCredentials: Bool) {
        self.url = url
        self.method = method
        self.dropsBody = dropsBody
        self.stripsCredentials = stripsCredentials
    }
}

/// A response as decisions see it: the head and the body, read into memory.
public struct ReceivedResponse: Sendable {
    /// The status line and header fields.
    public var head: HTTPResponse {
        didSet { status = head.status }
    }
    /// The body (bounded by the request's or client's limit). Empty for a response that is not a success whose body
    /// was over the limit or cut short: the call still fails with that error unless a decision fails it or restarts
    /// it (a retry of a 503, a redirect).
    public var body: Data
    /// Whether the response came from the client's cache, and how old it is; `nil` without a cache.
    public var cacheStatus: CacheStatus?
    /// The protocol the response came over (`h2`, `http/1.1`), when the transport reported it.
    public var negotiatedProtocol: String?

    /// Creates a response.
    public init(
        head: HTTPResponse,
        body: Data = Data(),
        cacheStatus: CacheStatus? = nil,
        negotiatedProtocol: String? = nil
    ) {
        self.head = head
        self.status = head.status
        self.body = body
        self.cacheStatus = cacheStatus
        self.negotiatedProtocol = negotiatedProtocol
    }

    /// The status (`head.status`, read once: `HTTPResponse` parses it from its text each time it is asked, and a
    /// response's decisions ask several times; issue #17).
    public private(set) var status: HTTPResponse.Status
}

/// What a decision knows about the call.
public struct DecisionContext: Sendable {
    /// The request as it was sent (secrets included: do not log it; use ``CourierError/request`` for display).
    public var request: HTTPRequest
    /// Whether the request body can be sent again (it has none, or it is replayable).
    public var canResendBody: Bool
    /// The 1-based attempt number.
    public var attempt: Int
    /// How many restarts happened so far in this call.
    public var restarts: Int
    /// The most restarts the call may make (``Client/Configuration/maxRestarts``): a restart past it fails the call
    /// with ``CourierError/Code/tooManyRestarts``. Default: no limit.
    public var maxRestarts: Int = .max
    /// Whether a restart may still happen. A decision that waits or counts before it restarts (a retry's back-off)
    /// checks this first, so that it neither waits nor reports a retry that will not be made.
    public var canRestart: Bool { restarts < maxRestarts }
    /// The decision list of this attempt.
    public var decisions: [any Decision]
    /// The position of the running decision in ``decisions``.
    public var index: Int
    /// The instant by which the whole call must finish, if it has a deadline.
    public var deadline: ContinuousClock.Instant? {
        get { deadlineMoment?.instant }
        set { deadlineMoment = newValue.map(Moment.init) }
    }
    /// ``deadline``, stored in a layout known when compiling (see `Moment`).
    var deadlineMoment: Moment?
    /// The clock decisions sleep on (retry backoff), injectable for tests.
    public var clock: any Clock<Duration>
    /// The client's JSON decoder.
    public var jsonDecoder: JSONDecoder
    /// The client's logger.
    public var logger: Logger
    /// The call's events for the client's monitors (`nil` when it has none): decisions report retries and
    /// refreshes through it.
    var events: CallEvents?
    /// The call's slot of the client's ``Client/Configuration/maxConcurrentRequests``, if it has one: ``pause(for:)``
    /// gives it back.
    var slot: Slot?

    /// Creates a decision context (for tests of a single decision).
    public init(
        request: HTTPRequest,
        canResendBody: Bool = true,
        attempt: Int = 1,
        restarts: Int = 0,
        decisions: [any Decision] = [],
        index: Int = 0,
        deadline: ContinuousClock.Instant? = nil,
        clock: any Clock<Duration> = ContinuousClock(),
        jsonDecoder: JSONDecoder = JSONDecoder(),
        logger: Logger = Client.Configuration.disabledLogger
    ) {
        self.request = request
        self.canResendBody = canResendBody
        self.attempt = attempt
        self.restarts = restarts
        self.decisions = decisions
        self.index = index
        self.deadlineMoment = deadline.map(Moment.init)
        self.clock = clock
        self.jsonDecoder = jsonDecoder
        self.logger = logger
    }

    /// Waits `duration` on ``clock`` before a restart (a back-off), first giving back the call's slot of
    /// ``Client/Configuration/maxConcurrentRequests``: other calls go while this one waits, and its next attempt
    /// waits for a slot like any call. A decision that waits should pause this way rather than sleep on ``clock``,
    /// which keeps the slot (a `Retry-After: 60` on as many calls as the limit would stop the client for a minute).
    ///
    /// - Throws: `CancellationError` when the call is cancelled while it waits.
    public func pause(for duration: Duration) async throws {
        slot?.release()
        guard duration > .zero else { return }
        try await clock.sleep(for: duration, tolerance: nil)
    }

    /// This attempt's decisions with the running one replaced by `successor`, for a restart.
    ///
    /// ```swift
    /// return .restart(with: context.decisions(replacingCurrentWith: RetryDecision(remaining: remaining - 1)))
    /// ```
    public func decisions(replacingCurrentWith successor: any Decision) -> [any Decision] {
        var result = decisions
        if result.indices.contains(index) {
            result[index] = successor
        } else {
            result.insert(successor, at: 0)
        }
        return result
    }
}
