public import Logging

/// Sends one HTTP request over some medium and returns the response head and streamed body.
///
/// A transport is the last step of Courier's pipeline: the request it receives is fully adapted and validated
/// (headers checked, exactly one framing header). A transport must not follow redirects (Courier's decisions do,
/// the same way on every transport), must not decompress a body without a size limit, and must stop promptly
/// when the calling `Task` is cancelled, throwing `CancellationError`.
///
/// Errors a transport throws reach the caller wrapped in ``CourierError`` with the stage
/// ``CourierError/Stage/transport``; a transport that can classify a failure (a timeout, a lost connection)
/// throws a ``CourierError`` with the matching code itself.
///
/// Real transports live in their own modules; `CourierTesting` provides `MockTransport`.
public protocol Transport: Sendable {
    /// Sends `request` and returns the response head once it arrives; the body streams afterwards.
    ///
    /// - Parameters:
    ///   - request: The adapted, validated request.
    ///   - context: Per-call information: deadline, logger, limits.
    /// - Returns: The response head and its body, which the caller reads at most once.
    /// - Throws: `CancellationError` when the task is cancelled; otherwise an error describing the failure.
    func send(_ request: OutgoingRequest, context: TransportContext) async throws -> TransportResponse
}

/// Per-call information Courier hands to a ``Transport``.
public struct TransportContext: Sendable {
    /// The instant by which the whole call must finish, if the request has a deadline.
    public var deadline: ContinuousClock.Instant? {
        get { deadlineMoment?.instant }
        set { deadlineMoment = newValue.map(Moment.init) }
    }
    /// ``deadline``, stored in a layout known when compiling (see `Moment`).
    var deadlineMoment: Moment?
    /// The largest response body the caller will read into memory; a transport may use it to refuse early.
    public var maxResponseBodySize: Int
    /// The 1-based attempt number of this logical call (restarts and retries increase it).
    public var attempt: Int
    /// A logger for transport-level details.
    public var logger: Logger
    /// How this call's HTTPS connections are secured (the server's ``Server/tls``, else the client's). A transport
    /// applies every setting or fails with ``CourierError/Code/unsupported`` naming the one it cannot honour.
    public var tls: TLSOptions
    /// Whether this call goes through a proxy (the server's ``Server/proxy``, else the client's). A transport
    /// routes the call as ``ProxyOptions/endpoint(for:)`` says or fails with ``CourierError/Code/unsupported``.
    public var proxy: ProxyOptions
    /// The request's lane: a transport with connection pools sends ``RequestLane/priority`` requests on a pool of
    /// their own, so that they never wait for a connection held by the calls that wait for them.
    public var lane: RequestLane

    /// Creates a transport context.
    public init(
        deadline: ContinuousClock.Instant? = nil,
        maxResponseBodySize: Int = Client.Configuration.defaultMaxResponseBodySize,
        attempt: Int = 1,
        logger: Logger = Client.Configuration.disabledLogger,
        tls: TLSOptions = .default,
        proxy: ProxyOptions = .direct,
        lane: RequestLane = .standard
    ) {
        self.deadlineMoment = deadline.map(Moment.init)
        self.maxResponseBodySize = maxResponseBodySize
        self.attempt = attempt
        self.logger = logger
        self.tls = tls
        self.proxy = proxy
        self.lane = lane
    }
}
