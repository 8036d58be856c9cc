#if Observability
    public import CourierCore
    import HTTPTypes
    public import Tracing

    /// A swift-distributed-tracing span per call, a child span per attempt, and the attempt's trace context
    /// (W3C `traceparent` with a W3C instrument) injected into the outgoing request.
    ///
    /// It is both a `RequestAdapter` and an `EventMonitor`: the adapter runs on the request path, starts the spans
    /// and injects the context (it must, so the server sees the attempt's span); the monitor, off the request path,
    /// adds attributes and ends the spans at the times the events carry. Install both halves with
    /// `Client.Configuration.addTracing(_:)`:
    ///
    /// ```swift
    /// var configuration = Client.Configuration()
    /// configuration.addTracing(TracingMonitor())                  // InstrumentationSystem.tracer, as bootstrapped
    /// ```
    ///
    /// The call span is named after the request type (`GetUser`), kind `internal` (it spans Courier's work: adapters,
    /// decisions, retries, parsing), and is a child of the caller's current span; each attempt is a child span named
    /// after the method (`GET`; `HTTP` for a method the conventions do not know, recorded as `_OTHER` with
    /// `http.request.method_original`), kind `client`, with OpenTelemetry HTTP attributes (`http.request.method`,
    /// `url.full` redacted, `server.address`, `server.port`, `http.response.status_code`, `error.type`, and on a
    /// resend `http.request.resend_count`). An attempt that got no response (refused, reset, timed out), or whose
    /// response was still coming when the call failed (a body cut off, a cancel, a deadline), has error status and
    /// the failure's code as `error.type`. Retries, refreshes and cache results are events on the call span; an attempt answered by
    /// the HTTP cache also has a `client` span, so read `courier.cache` on its call span to tell it from the network.
    /// An event stream (`Client.events(_:)`) gets a span of its own, `GetNotifications stream`, over all its
    /// connections: each connection's call span is its child, each reconnect an event on it (`reconnect`, with
    /// `courier.reconnect.number`, `.delay_ms`, `.reason`), and it ends with the stream (`courier.stream.events`,
    /// `courier.stream.connections`).
    /// An attempt span ends when its response has been read (its first decision) or the attempt failed; the call span
    /// ends when the call returns or throws.
    ///
    /// A call's spans end with its last event, which monitors receive even when their buffer overflows, up to twice
    /// its capacity. As a safety net, when more than ``maxOpenCalls`` calls have open spans, the oldest are ended with
    /// `courier.incomplete = true`.
    public final class TracingMonitor: EventMonitor, InPlaceAdapter {
        /// `traceContext`.
        public var name: String { "traceContext" }
        /// Where spans go and how context is injected.
        public let tracer: any Tracer
        /// The most calls with open spans kept at once.
        public let maxOpenCalls: Int

        private let anchor: (wall: UInt64, instant: ContinuousClock.Instant)
        private let state = LockedBox(State())

        private struct CallSpans {
            var call: any Span
            var attempts: [Int: any Span] = [:]
        }

        private struct State {
            var calls: [CourierEvent.CallID: CallSpans] = [:]
            var order: [CourierEvent.CallID] = []
        }

        /// Creates a tracing monitor.
        ///
        /// - Parameters:
        ///   - tracer: The tracer; by default the one `InstrumentationSystem.bootstrap` installed. Pass one explicitly
        ///     to keep tests independent of the global.
        ///   - maxOpenCalls: The most calls with open spans kept at once. Default: 10 000.
        public init(tracer: any Tracer = InstrumentationSystem.tracer, maxOpenCalls: Int = 10_000) {
            self.tracer = tracer
            self.maxOpenCalls = max(1, maxOpenCalls)
            self.anchor = (DefaultTracerClock.now.nanosecondsSinceEpoch, .now)
        }

        // MARK: Adapter (request path)

        /// Starts the call's span as the call starts, on the caller's task: a child of the caller's current span
        /// (for a connection of an event stream, of the stream's span, which its first connection starts). So the
        /// span covers the whole call (a wait for a slot of `maxConcurrentRequests`, the adapters, a token refresh),
        /// and a call that fails before it is sent is still in the caller's trace.
        public func callWillStart(_ event: CourierEvent) {
            let parent = InstrumentationContext.current ?? .topLevel
            state.withLock { state in
                guard state.calls[event.callID] == nil else { return }
                state.calls[event.callID] = startCall(
                    event.callID, stream: event.stream, parent: parent, state: &state, at: event.instant)
            }
        }

        /// Starts this attempt's span under the call's span and injects the attempt's context.
        ///
        /// Does nothing when the client has no monitors (`AdapterContext.callID` is `nil`), that is when this
        /// monitor was added as an adapter only. A call whose start this monitor was not told of (a monitor that
        /// wraps this one and does not pass ``callWillStart(_:)`` on) gets its call span here, under the current
        /// span of the task the adapters run on.
        public func adapt(_ request: inout OutgoingRequest, context: AdapterContext) async throws {
            guard let callID = context.callID else { return }
            let parent = InstrumentationContext.current ?? .topLevel
            let method = Self.method(request.head.method)
            let span = state.withLock { state -> any Span in
                var spans =
                    state.calls[callID]
                    ?? startCall(callID, stream: context.stream, parent: parent, state: &state, at: .now)
                let span = tracer.startSpan(
                    method.spanName, context: spans.call.context, ofKind: .client, at: timestamp(of: .now))
                spans.attempts[context.attempt]?.end()
                spans.attempts[context.attempt] = span
                state.calls[callID] = spans
                return span
            }
            span.updateAttributes { attributes in
                method.write(to: &attributes)
                // Only on a resend (a retry, a redirect, a replay after a token refresh), as the conventions say.
                if context.attempt > 1 { attributes["http.request.resend_count"] = context.attempt - 1 }
            }
            tracer.inject(span.context, into: &request.head.headerFields, using: HTTPFieldsInjector())
        }

        /// A call's spans, under `parent`, or for a connection of an event stream under the stream's span (which
        /// the stream's first connection starts).
        private func startCall(
            _ callID: CourierEvent.CallID, stream: CourierEvent.CallID?, parent: InstrumentationContext,
            state: inout State, at instant: ContinuousClock.Instant
        ) -> CallSpans {
            guard let stream else { return startCall(callID, parent: parent, state: &state, at: instant) }
            let streamSpans = state.calls[stream] ?? startCall(stream, parent: parent, state: &state, at: instant)
            state.calls[stream] = streamSpans
            return startCall(callID, parent: streamSpans.call.context, state: &state, at: instant)
        }

        private func startCall(
            _ callID: CourierEvent.CallID, parent: InstrumentationContext, state: inout State,
            at instant: ContinuousClock.Instant
        ) -> CallSpans {
            state.order.append(callID)
            while state.order.count > maxOpenCalls {
                let oldest = state.order.removeFirst()
                if let spans = state.calls.removeValue(forKey: oldest) {
                    for span in spans.attempts.values { span.end() }
                    spans.call.attributes["courier.incomplete"] = true
                    spans.call.end()
                }
            }
            // Every start and end is a monotonic instant placed on the wall clock by one anchor, so a step of the
            // wall clock (an NTP correction, a VM resumed) after the anchor cannot stretch or invert a span.
            let span = tracer.startSpan("HTTP", context: parent, ofKind: .internal, at: timestamp(of: instant))
            return CallSpans(call: span)
        }

        // MARK: Monitor (off the request path)

        /// Adds the event's facts to the call's spans and ends them when the attempt or the call is over.
        public func handle(_ event: CourierEvent) async {
            let time = timestamp(of: event.instant)
            switch event.kind {
            case .started, .sent:
                break
            case .adapted(let head):
                withAttempt(event) { span in
                    span.updateAttributes { attributes in
                        Self.method(head.method).write(to: &attributes)
                        attributes["url.full"] = "\(head.scheme ?? "http")://\(head.authority ?? "")\(head.path ?? "")"
                        attributes["url.scheme"] = head.scheme
                        attributes["server.address"] = head.authority.map(Self.host(ofAuthority:))
                        attributes["server.port"] = Self.port(of: head)
                    }
                }
            case .transferFailed(let error):
                // The attempt got no response: a network error, which the conventions mark as an error.
                withAttempt(event) { span in
                    span.attributes["error.type"] = Self.errorType(error)
                    span.recordError(error, attributes: [:], at: time)
                    span.setStatus(SpanStatus(code: .error))
                }
            case .responseHead(let head):
                withAttempt(event) { span in
                    span.attributes["http.response.status_code"] = head.status.code
                    if head.status.code >= 400 {
                        span.attributes["error.type"] = "\(head.status.code)"
                        span.setStatus(SpanStatus(code: .error))
                    }
                }
            case .decision(let step):
                if step.kind != .adapter { endAttempt(event.callID, event.attempt, at: time) }
            case .retried(let delay):
                endAttempt(event.callID, event.attempt, at: time)
                withCall(event) { span in
                    let attributes = SpanAttributes(["courier.retry.delay_ms": .int64(delayInMilliseconds(delay))])
                    span.addEvent(SpanEvent(name: "retry", at: time, attributes: attributes))
                }
            case .refreshed:
                endAttempt(event.callID, event.attempt, at: time)
                withCall(event) { $0.addEvent(SpanEvent(name: "refresh", at: time)) }
            case .cached(let outcome):
                withCall(event) { span in
                    span.attributes["courier.cache"] = outcome.rawValue
                    span.addEvent(SpanEvent(name: "cache \(outcome.rawValue)", at: time))
                }
            case .finished(let status, _, _):
                endCall(event, at: time) { span in
                    span.attributes["http.response.status_code"] = status.code
                }
            case .failed(let error, let status, _):
                endCall(event, at: time, error: error) { span in
                    if let status { span.attributes["http.response.status_code"] = status.code }
                    span.attributes["error.type"] = Self.errorType(error)
                    span.recordError(error, attributes: [:], at: time)
                    span.setStatus(SpanStatus(code: .error))
                }
            case .reconnecting(let number, let delay, let reason):
                let span = state.withLock { state in
                    let spans =
                        state.calls[event.callID]
                        ?? startCall(event.callID, parent: .topLevel, state: &state, at: event.instant - event.elapsed)
                    state.calls[event.callID] = spans
                    return spans.call
                }
                let attributes = SpanAttributes([
                    "courier.reconnect.number": .int64(Int64(number)),
                    "courier.reconnect.delay_ms": .int64(delayInMilliseconds(delay)),
                    "courier.reconnect.reason": .string(reason),
                ])
                span.addEvent(SpanEvent(name: "reconnect", at: time, attributes: attributes))
            case .streamEnded(let connections, let events, let error):
                endCall(event, at: time, name: "\(event.requestName) stream", error: error) { span in
                    span.attributes["courier.stream.connections"] = connections
                    span.attributes["courier.stream.events"] = events
                    if let error {
                        span.attributes["error.type"] = Self.errorType(error)
                        span.recordError(error, attributes: [:], at: time)
                        span.setStatus(SpanStatus(code: .error))
                    }
                }
            }
        }

        private func withAttempt(_ event: CourierEvent, _ body: (any Span) -> Void) {
            guard let span = state.withLock({ $0.calls[event.callID]?.attempts[event.attempt] }) else { return }
            body(span)
        }

        private func withCall(_ event: CourierEvent, _ body: (any Span) -> Void) {
            guard let span = state.withLock({ $0.calls[event.callID]?.call }) else { return }
            body(span)
        }

        private func endAttempt(_ callID: CourierEvent.CallID, _ attempt: Int, at time: DefaultTracerClock.Timestamp) {
            let span = state.withLock { $0.calls[callID]?.attempts.removeValue(forKey: attempt) }
            span?.end(at: time)
        }

        /// Ends the call's open spans; a call that failed before any attempt was sent gets a span of its own now.
        private func endCall(
            _ event: CourierEvent,
            at time: DefaultTracerClock.Timestamp,
            name: String? = nil,
            error: (any Error)? = nil,
            _ finish: (any Span) -> Void
        ) {
            let spans = state.withLock { state -> CallSpans? in
                state.order.removeAll { $0 == event.callID }
                return state.calls.removeValue(forKey: event.callID)
            }
            for (_, span) in spans?.attempts ?? [:] {
                // Still open as the call fails: its response never ended (a body cut off, the call cancelled or past
                // its deadline while the body came, a `transferFailed` the buffer dropped). A network error
                // receiving the body is an error on the attempt too, whatever its status.
                if let error {
                    span.attributes["error.type"] = Self.errorType(error)
                    span.setStatus(SpanStatus(code: .error))
                }
                span.end(at: time)
            }
            let call =
                spans?.call
                ?? tracer.startSpan(
                    "HTTP", context: InstrumentationContext.topLevel, ofKind: .internal,
                    at: timestamp(of: event.instant - event.elapsed))
            call.operationName = name ?? event.requestName
            call.updateAttributes { attributes in
                Self.method(event.method).write(to: &attributes)
                attributes["courier.request"] = event.requestName
                attributes["courier.environment"] = event.environment.rawValue
                attributes["courier.attempts"] = event.attempt
            }
            finish(call)
            call.end(at: time)
        }

        /// The wall-clock time of a monotonic instant, by the offset from the pair taken at creation.
        private func timestamp(of instant: ContinuousClock.Instant) -> DefaultTracerClock.Timestamp {
            let offset = anchor.instant.duration(to: instant)
            let nanoseconds = offset.components.seconds * 1_000_000_000 + offset.components.attoseconds / 1_000_000_000
            let wall = Int64(clamping: anchor.wall) &+ nanoseconds
            return DefaultTracerClock.Timestamp(nanosecondsSinceEpoch: UInt64(max(0, wall)))
        }

        private func delayInMilliseconds(_ delay: Duration) -> Int64 {
            delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000
        }

        /// A request method as the conventions record it: a method they know by its name; any other as `_OTHER`,
        /// with its own name in `http.request.method_original` and a span named `HTTP` (so that a free-form method
        /// does not make a span name of its own).
        struct Method {
            static let known: Set<String> = [
                "CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE", "QUERY",
            ]
            let spanName: String
            let value: String
            let original: String?

            func write(to attributes: inout SpanAttributes) {
                attributes["http.request.method"] = value
                if let original { attributes["http.request.method_original"] = original }
            }
        }

        static func method(_ method: HTTPRequest.Method) -> Method {
            let raw = method.rawValue
            if Method.known.contains(raw) { return Method(spanName: raw, value: raw, original: nil) }
            return Method(spanName: "HTTP", value: "_OTHER", original: raw)
        }

        static func errorType(_ error: any Error) -> String {
            if error is CancellationError { return "cancelled" }
            if let error = error as? CourierError { return "\(error.code)" }
            return "\(type(of: error))"
        }

        /// The port the request goes to: the authority's, or the scheme's default.
        static func port(of head: HTTPRequest) -> Int? {
            if let authority = head.authority {
                let afterHost = authority.hasPrefix("[") ? authority.drop { $0 != "]" }.dropFirst() : authority[...]
                if let colon = afterHost.lastIndex(of: ":"), let port = Int(afterHost[afterHost.index(after: colon)...])
                {
                    return port
                }
            }
            switch head.scheme?.lowercased() {
            case "https": return 443
            case "http": return 80
            default: return nil
            }
        }

        static func host(ofAuthority authority: String) -> String {
            if authority.hasPrefix("["), let end = authority.firstIndex(of: "]") {
                return String(authority[...end])
            }
            return String(authority.prefix { $0 != ":" })
        }
    }

    extension Client.Configuration {
        /// Adds `monitor` as the last adapter (to inject the trace context) and as a monitor (to finish the spans).
        public mutating func addTracing(_ monitor: TracingMonitor) {
            adapters.append(monitor)
            monitors.append(monitor)
        }
    }
#endif
