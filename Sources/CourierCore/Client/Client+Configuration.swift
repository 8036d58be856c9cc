public import Foundation
public import Logging

extension Client {
    /// Everything about a client except its servers and transport.
    public struct Configuration: Sendable {
        /// The default for ``maxResponseBodySize``: 10 MiB.
        public static let defaultMaxResponseBodySize = 10 * 1024 * 1024

        /// A logger that discards everything (the default: Courier is silent unless given a logger).
        public static let disabledLogger = Logger(label: "courier", factory: { _ in SwiftLogNoOpLogHandler() })

        /// The HTTP cache around the transport (design §1 step 4); `nil` (the default) caches nothing.
        ///
        /// Off by default, like OkHttp: a cache serves responses without asking the server, needs a decision on
        /// where it lives (memory or a directory) and how big it may get, and must follow the app's sign-in
        /// state. Each request chooses how it uses the cache with ``Request/cachePolicy``.
        public var cache: HTTPCache? = nil

        /// At most this many calls between their adapters and their response at a time (a download until its body
        /// is read, since its connection is busy until then); the others wait in order, before their adapters run.
        /// `nil` (the default): no limit but the transport's own.
        ///
        /// Set it to the transport's pool size (`AsyncHTTPClientTransport.Configuration.maxConnectionsPerHost`, 8 by default) when many
        /// calls run at once: a call that waits here is signed when it goes, with the credential current then, so
        /// after a token refresh the waiting calls carry the new token instead of being rejected and replayed (a
        /// transport's own queue holds requests signed before they queued). ``RequestLane/priority`` requests, such
        /// as Courier's token requests, do not wait. A call waiting out a retry's back-off (`Retry-After`) holds no
        /// slot (``DecisionContext/pause(for:)``). A client made by ``Client/configured(_:)`` has a limiter of its
        /// own; one made by ``Client/switching(to:)`` shares this one's.
        public var maxConcurrentRequests: Int? = nil

        /// Whether identical GET and HEAD requests in flight at the same time share one transfer (each caller
        /// still runs its own decisions and parser); `false` by default.
        ///
        /// Opt-in: sharing is invisible for a well-behaved API, but not for a server whose GETs have side
        /// effects or per-request values (counters, nonces, `/uuid`), for metrics that count requests, or for
        /// test doubles that script one answer per request; and a client with a cache already sends most
        /// repeated GETs only once. Streamed downloads never share.
        public var deduplicatesRequests = false

        /// The transfers in flight, shared by copies of this configuration.
        let inflight = InflightRequests()

        /// How many de-duplicated transfers are in flight, and how many callers wait on them (for tests).
        package var inflightCounts: (transfers: Int, callers: Int) { inflight.counts }

        /// Returns once at least `count` callers wait on de-duplicated transfers (for tests: no polling).
        package func waitForInflightCallers(_ count: Int) async { await inflight.waitForCallers(count) }

        /// Adapters run on every request after the request's own: authentication, user agent.
        /// Default: `[UserAgentAdapter.courier]`.
        public var adapters: [any RequestAdapter]
        /// Decisions run on every response before the request's own: redirects, token refresh, retries.
        /// Default: `[RedirectDecision()]`.
        public var decisions: [any Decision]
        /// When failed calls are retried, unless a request sets its own ``Request/retryPolicy``. Its decision goes
        /// after ``decisions``, or before the first ``ValidateStatusDecision`` among them, so that a status check
        /// there does not fail a 503 before it is retried; a ``RetryDecision`` in ``decisions`` replaces it.
        /// Default: ``RetryPolicy/default`` (2 retries, exponential backoff with jitter, idempotent methods).
        public var retryPolicy: RetryPolicy
        /// Encodes JSON bodies.
        public var jsonEncoder: JSONEncoder
        /// Decodes JSON bodies and error bodies.
        public var jsonDecoder: JSONDecoder
        /// Encodes query strings (spaces as `%20`).
        public var queryEncoder: URLEncodedFormEncoder
        /// Encodes form bodies.
        public var formEncoder: URLEncodedFormEncoder
        /// The largest response body read into memory. Default: 10 MiB.
        public var maxResponseBodySize: Int
        /// The most restarts one call may take before failing with ``CourierError/Code/tooManyRestarts``.
        /// Default: 20 (as OkHttp's follow-up limit).
        public var maxRestarts: Int
        /// A deadline for a whole call, restarts included, unless the request sets its own. Default: none.
        ///
        /// The call ends with ``CourierError/Code/timedOut`` when it passes, whatever step it is in: a step that
        /// does not stop when cancelled (an adapter awaiting something uncancellable) finishes in the background, and
        /// its result is dropped.
        public var timeout: Duration?
        /// Which hosts may be reached over cleartext `http`. Default: loopback only.
        public var cleartextPolicy: CleartextPolicy
        /// How HTTPS connections are secured: trust, pins, client certificate, minimum version (see
        /// ``TLSOptions``); a ``Server/tls`` replaces it for that server. Default: ``TLSOptions/default``.
        public var tls: TLSOptions = .default
        /// Whether calls go through an HTTP proxy (see ``ProxyOptions``); a ``Server/proxy`` replaces it for that
        /// server. Default: ``ProxyOptions/direct``: environment variables such as `HTTPS_PROXY` are followed only
        /// when you set ``ProxyOptions/environment``.
        public var proxy: ProxyOptions = .direct
        /// Which secrets are hidden in logs, traces, errors and cURL descriptions.
        public var redactor: Redactor
        /// The logger for one line per call. Default: disabled.
        public var logger: Logger
        /// The level of the line logged for a call that succeeded. Default: `debug`, as libraries log unless asked
        /// otherwise; raise it (say to `info`) to see every call in production logs.
        public var callLogLevel: Logger.Level = .debug
        /// The level of the line logged for a call that failed. Default: `debug` too: a failure the app handles is
        /// not a warning; raise it when Courier's line is the only place a failure is reported.
        public var failureLogLevel: Logger.Level = .debug
        /// The clock decisions sleep on (retry backoff). Inject a test clock to make tests instant.
        public var clock: any Clock<Duration>
        /// Monitors that receive a ``CourierEvent`` for each stage of every call, off the request path (see
        /// ``EventMonitor``). Default: none, and then no events are built at all.
        public var monitors: [any EventMonitor] {
            didSet { dispatcher = EventDispatcher(monitors: monitors, capacity: monitorBufferCapacity) }
        }
        /// How many events each monitor may have waiting; when its buffer is full, further events for that
        /// monitor are dropped (and counted in ``Client/droppedMonitorEvents``), never waited for, except each
        /// call's last event, which still gets in until twice as many are waiting (so a monitor that is stuck
        /// or slower than the calls for good holds at most twice this many). Default: 1024.
        public var monitorBufferCapacity: Int {
            didSet { dispatcher = EventDispatcher(monitors: monitors, capacity: monitorBufferCapacity) }
        }
        /// Counts this client's calls in flight (share one tracker among clients for an app-wide count).
        /// Default: none.
        public var activity: ActivityTracker?
        /// Delivers events to ``monitors``; shared by copies of this configuration.
        private(set) var dispatcher: EventDispatcher?
        /// Whether calls go as after a redirect to another origin: the credential headers (and the redactor's
        /// sensitive ones) are removed after every adapter ran, and a required credential is optional. Set for a
        /// linked page on another origin (``Client/withoutCredentials()``), whose client adapters (a fixed
        /// `Authorization` header) would otherwise sign it.
        package var sendsCredentials = true

        /// Creates a configuration; every parameter has a default.
        public init(
            adapters: [any RequestAdapter] = [UserAgentAdapter.courier],
            decisions: [any Decision] = [RedirectDecision()],
            retryPolicy: RetryPolicy = .default,
            jsonEncoder: JSONEncoder = JSONEncoder(),
            jsonDecoder: JSONDecoder = JSONDecoder(),
            queryEncoder: URLEncodedFormEncoder = URLEncodedFormEncoder(),
            formEncoder: URLEncodedFormEncoder = URLEncodedFormEncoder(),
            maxResponseBodySize: Int = Configuration.defaultMaxResponseBodySize,
            maxRestarts: Int = 20,
            timeout: Duration? = nil,
            cleartextPolicy: CleartextPolicy = .loopbackOnly,
            redactor: Redactor = .default,
            logger: Logger = Configuration.disabledLogger,
            clock: any Clock<Duration> = ContinuousClock(),
            monitors: [any EventMonitor] = [],
            monitorBufferCapacity: Int = 1024,
            activity: ActivityTracker? = nil
        ) {
            self.adapters = adapters
            self.decisions = decisions
            self.retryPolicy = retryPolicy
            self.jsonEncoder = jsonEncoder
            self.jsonDecoder = jsonDecoder
            self.queryEncoder = queryEncoder
            self.formEncoder = formEncoder
            self.maxResponseBodySize = maxResponseBodySize
            self.maxRestarts = maxRestarts
            self.timeout = timeout
            self.cleartextPolicy = cleartextPolicy
            self.redactor = redactor
            self.logger = logger
            self.clock = clock
            self.monitors = monitors
            self.monitorBufferCapacity = monitorBufferCapacity
            self.activity = activity
            self.dispatcher = EventDispatcher(monitors: monitors, capacity: monitorBufferCapacity)
        }
    }
}

/// Which hosts a client may reach over cleartext `http://`.
///
/// Linux has no App Transport Security, so Courier enforces this itself: a request to a disallowed host fails
/// with ``CourierError/Code/invalidURL`` before anything is sent.
public enum CleartextPolicy: Hashable, Sendable {
    /// Only `localhost`, `127.0.0.0/8` and `::1` (the default).
    case loopbackOnly
    /// Loopback and these hosts (compared case-insensitively).
    case hosts(Set<String>)
    /// Any host. Use for trusted networks only.
    case always
    /// No host, not even loopback.
    case never

    /// Whether `host` may be reached over `http`.
    public func allows(host: String) -> Bool {
        allows(host: host[...])
    }

    /// Whether `host` may be reached over `http`; checks the loopback case without allocating.
    func allows(host: Substring) -> Bool {
        switch self {
        case .always: return true
        case .never: return false
        case .loopbackOnly: return Self.isLoopback(host)
        case .hosts(let hosts):
            return Self.isLoopback(host) || hosts.contains { $0.lowercased() == host.lowercased() }
        }
    }

    static func isLoopback(_ host: Substring) -> Bool {
        if isIPv4Loopback(host.utf8) { return true }
        let host = host.lowercased()
        return host == "localhost" || host == "::1" || host == "[::1]" || host.hasSuffix(".localhost")
    }

    /// `127.a.b.c`, four decimal octets of at most 255 each.
    private static func isIPv4Loopback(_ bytes: Substring.UTF8View) -> Bool {
        var octets = 0
        var value = 0
        var digits = 0
        var first = -1
        for byte in bytes {
            if byte == UInt8(ascii: ".") {
                guard digits > 0, octets < 3 else { return false }
                if octets == 0 { first = value }
                octets += 1
                value = 0
                digits = 0
            } else if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 3 {
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                digits += 1
                guard value <= 255 else { return false }
            } else {
                return false
            }
        }
        return octets == 3 && digits > 0 && first == 127
    }
}
