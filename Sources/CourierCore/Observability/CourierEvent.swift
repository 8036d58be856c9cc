public import HTTPTypes

/// Something that happened during one call, delivered to every ``EventMonitor`` of the client.
///
/// Each call has its own ``callID``; its events arrive at a monitor in the order they happened. Header fields in
/// events are already redacted with the client's ``Redactor``, and errors are the ``CourierError`` the caller sees
/// (also redacted), so a monitor can print what it gets.
///
/// The stages, in the order a call goes through them:
///
/// ```
/// started → adapted → sent → (responseHead → decision… | transferFailed) → (retried | refreshed → adapted → …)
///     → finished | failed
/// ```
public struct CourierEvent: Sendable, CustomStringConvertible {
    /// Identifies one call (all its attempts) within the process.
    public struct CallID: Hashable, Sendable, CustomStringConvertible {
        /// The number, unique among calls in this process.
        public let rawValue: UInt64

        /// Wraps a number.
        public init(rawValue: UInt64) { self.rawValue = rawValue }

        /// `#` and the number, such as `#42`.
        public var description: String { "#\(rawValue)" }
    }

    /// What happened.
    public enum Kind: Sendable {
        /// The call began (before the URL is resolved).
        case started
        /// The adapters ran and the request was validated; its head, secrets redacted, is what goes on the wire.
        case adapted(HTTPRequest)
        /// The request was handed to the transport.
        case sent
        /// This attempt's exchange failed without a response: the connection was refused, reset or timed out, the
        /// TLS handshake failed, and so on. `error` is the ``CourierError`` as the caller would see it (redacted).
        /// The retry policy may send the request again (``retried(delay:)`` follows); otherwise the call's
        /// ``failed(error:status:duration:)`` does.
        case transferFailed(error: any Error)
        /// The response head of this attempt arrived (sensitive headers such as `Set-Cookie` redacted).
        case responseHead(HTTPResponse)
        /// A decision or the parser ran (the step the ``DecisionTrace`` records; adapters are covered by
        /// ``adapted(_:)``).
        case decision(DecisionTrace.Step)
        /// The retry policy will send the request again after `delay` (already waited when the next attempt's
        /// events arrive).
        case retried(delay: Duration)
        /// The authenticator refreshed (or picked up a newer) credential and the call goes round again.
        case refreshed
        /// The HTTP cache answered or stored this call's response.
        case cached(CacheOutcome)
        /// The call returned a value; `status` is the final response's, `bytes` its body size when read into
        /// memory.
        case finished(status: HTTPResponse.Status, duration: Duration, bytes: Int?)
        /// The call threw `error` (a ``CourierError``, or `CancellationError`); `status` is that of the last
        /// response, if one arrived.
        case failed(error: any Error, status: HTTPResponse.Status?, duration: Duration)
        /// An event stream (``EventSource``) lost its connection and reconnects after `delay`: the `number`th
        /// reconnect in a row without an event, for `reason` ("the stream broke", "the server ended the stream",
        /// "connecting failed"). The event's ``CourierEvent/callID`` is the stream's (see ``CourierEvent/stream``).
        case reconnecting(number: Int, delay: Duration, reason: String)
        /// An event stream ended after `events` events over `connections` connections: normally (`error` is `nil`:
        /// the server answered 204, or the consumer stopped iterating) or with `error`. The stream's last event.
        case streamEnded(connections: Int, events: Int, error: (any Error)?)
    }

    /// What the HTTP cache did.
    public enum CacheOutcome: String, Hashable, Sendable, CustomStringConvertible {
        /// A fresh stored response answered the call without the network.
        case hit
        /// A stored response was confirmed by the server (`304 Not Modified`).
        case revalidated
        /// The cache had nothing usable; the call went to the network.
        case miss
        /// The response was stored. Not sent for a streamed response, which is stored (if at all) when its reader
        /// reaches the end, after the call's events.
        case stored
        /// A stale stored response answered the call (`stale-while-revalidate`, `stale-if-error`, offline, or a
        /// ``CachePolicy`` that accepts stale entries).
        case stale

        /// The raw value: `hit`, `revalidated`, `miss`, `stored` or `stale`.
        public var description: String { rawValue }
    }

    /// The call the event belongs to.
    public var callID: CallID
    /// The event stream this call is a connection of (``Client/events(_:lastEventID:limits:reconnect:tags:)``), or `nil`.
    ///
    /// Every connection of one stream is its own call with its own ID; they share this one, which is also the
    /// ``callID`` of the stream's own events (``Kind/reconnecting(number:delay:reason:)`` and
    /// ``Kind/streamEnded(connections:events:error:)``), so a monitor can put them together (`TracingMonitor`
    /// makes it one span with the connections' spans under it).
    public var stream: CallID?
    /// The request's ``Request/requestName``: its Swift type by default, such as `GetUser` (a bounded set: never a
    /// URL or an ID).
    public var requestName: String
    /// The request's declared method (a redirect may change the method on the wire; see ``Kind/adapted(_:)``).
    public var method: HTTPRequest.Method
    /// The environment whose server the call went to.
    public var environment: Server.Environment
    /// The 1-based attempt the event belongs to; 0 before the first attempt began.
    public var attempt: Int
    /// When it happened, on the monotonic clock.
    public var instant: ContinuousClock.Instant
    /// Time since the call started.
    public var elapsed: Duration
    /// What happened.
    public var kind: Kind

    /// Creates an event (for tests of monitors; Courier creates the real ones).
    public init(
        callID: CallID,
        requestName: String,
        method: HTTPRequest.Method,
        environment: Server.Environment,
        attempt: Int,
        instant: ContinuousClock.Instant = .now,
        elapsed: Duration = .zero,
        stream: CallID? = nil,
        kind: Kind
    ) {
        self.callID = callID
        self.stream = stream
        self.requestName = requestName
        self.method = method
        self.environment = environment
        self.attempt = attempt
        self.instant = instant
        self.elapsed = elapsed
        self.kind = kind
    }

    /// One line, such as `#12 GetUser attempt 1: responseHead 200` (secrets already redacted).
    public var description: String {
        "\(callID) \(requestName) attempt \(attempt): \(kind)".oneLine
    }
}

extension CourierEvent.Kind: CustomStringConvertible {
    /// The kind and its payload in a few words, such as `finished 200 (12 ms, 340 B)`.
    public var description: String {
        switch self {
        case .started: "started"
        case .adapted(let head): "adapted \(head.method) \(Redactor.displayURL(of: head))"
        case .sent: "sent"
        case .transferFailed(let error): "transferFailed: \(error)"
        case .responseHead(let head): "responseHead \(head.status.code)"
        case .decision(let step): "decision \(step.name) \(step.outcome)"
        case .retried(let delay): "retried after \(RequestLogLine.format(delay))"
        case .refreshed: "refreshed"
        case .cached(let outcome): "cached \(outcome)"
        case .finished(let status, let duration, let bytes):
            "finished \(status.code) (\(RequestLogLine.format(duration))"
                + (bytes.map { ", \(RequestLogLine.format(bytes: $0))" } ?? "") + ")"
        case .failed(let error, let status, let duration):
            "failed\(status.map { " \($0.code)" } ?? "") (\(RequestLogLine.format(duration))): \(error)"
        case .reconnecting(let number, let delay, let reason):
            "reconnecting #\(number) after \(RequestLogLine.format(delay)): \(reason)"
        case .streamEnded(let connections, let events, let error):
            "streamEnded (\(events) events, \(connections) connections)\(error.map { ": \($0)" } ?? "")"
        }
    }
}
