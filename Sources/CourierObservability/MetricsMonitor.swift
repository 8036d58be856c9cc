#if Observability
    public import CoreMetrics
    public import CourierCore
    import HTTPTypes
    import Metrics

    /// Records swift-metrics counters and timers for every call: count, duration, status class, retries, refreshes,
    /// cache results.
    ///
    /// Labels are bounded: method, environment, outcome, status class (`2xx`…), error code, cache result, and (only
    /// when ``includesRequestName`` is on) the request's Swift type. Never a URL, a path, a query or an ID.
    ///
    /// | Metric (default prefix `courier`) | Kind | Dimensions |
    /// |---|---|---|
    /// | `courier_requests_total` | counter | `method`, `environment`, `outcome`, `status_class` |
    /// | `courier_request_duration_seconds` | timer | `method`, `environment`, `outcome`, `status_class` |
    /// | `courier_failures_total` | counter | `method`, `environment`, `code` |
    /// | `courier_retries_total` | counter | `method`, `environment` |
    /// | `courier_refreshes_total` | counter | `environment` |
    /// | `courier_cache_total` | counter | `method`, `environment`, `result` |
    /// | `courier_stream_reconnects_total` | counter | `method`, `environment` |
    /// | `courier_streams_total` | counter | `method`, `environment`, `outcome` |
    ///
    /// Each connection of an event stream counts as a request; the stream itself counts once in
    /// `courier_streams_total` when it ends, and each reconnect in `courier_stream_reconnects_total`. A stream's
    /// connections are left out of `courier_request_duration_seconds`: their duration is how long the stream stayed
    /// open (minutes, hours), which would swamp the latency of the requests in the same series.
    ///
    /// `outcome` is `success`, `failure` or `cancelled`; `status_class` is `1xx`…`5xx`, or `none` when no response
    /// arrived; `code` is the `CourierError.Code` (`timedOut`, `unacceptableStatus`…) or `cancelled`.
    ///
    /// ```swift
    /// var configuration = Client.Configuration()
    /// configuration.monitors.append(MetricsMonitor())            // MetricsSystem.factory, as bootstrapped
    /// ```
    public struct MetricsMonitor: EventMonitor {
        /// Where the metrics go.
        public let factory: any MetricsFactory
        /// The start of every metric's label.
        public let prefix: String
        /// Whether a `request` dimension carries the request's Swift type (`GetUser`): bounded by the number of
        /// request types, and off by default.
        public let includesRequestName: Bool

        /// Creates a metrics monitor.
        ///
        /// - Parameters:
        ///   - factory: Where the metrics go; by default the one `MetricsSystem.bootstrap` installed. Pass one
        ///     explicitly to keep tests independent of the global.
        ///   - prefix: The start of every label. Default: `courier`.
        ///   - includesRequestName: Adds a `request` dimension with the request's Swift type. Default: off.
        public init(
            factory: any MetricsFactory = MetricsSystem.factory,
            prefix: String = "courier",
            includesRequestName: Bool = false
        ) {
            self.factory = factory
            self.prefix = prefix
            self.includesRequestName = includesRequestName
        }

        /// Updates the metrics an event concerns; other events are ignored.
        public func handle(_ event: CourierEvent) async {
            var dimensions = [("method", event.method.rawValue), ("environment", event.environment.rawValue)]
            if includesRequestName { dimensions.append(("request", event.requestName)) }
            switch event.kind {
            case .finished(let status, let duration, _):
                recordCall(
                    dimensions + [("outcome", "success"), ("status_class", Self.statusClass(status))],
                    event.stream == nil ? duration : nil)
            case .failed(let error, let status, let duration):
                let cancelled = error is CancellationError
                let outcome = cancelled ? "cancelled" : "failure"
                recordCall(
                    dimensions + [("outcome", outcome), ("status_class", Self.statusClass(status))],
                    event.stream == nil ? duration : nil)
                let code = cancelled ? "cancelled" : (error as? CourierError).map { "\($0.code)" } ?? "other"
                Counter(label: "\(prefix)_failures_total", dimensions: dimensions + [("code", code)], factory: factory)
                    .increment()
            case .retried:
                Counter(label: "\(prefix)_retries_total", dimensions: dimensions, factory: factory).increment()
            case .refreshed:
                let environment = dimensions.filter { $0.0 != "method" }
                Counter(label: "\(prefix)_refreshes_total", dimensions: environment, factory: factory).increment()
            case .cached(let outcome):
                Counter(
                    label: "\(prefix)_cache_total", dimensions: dimensions + [("result", outcome.rawValue)],
                    factory: factory
                ).increment()
            case .reconnecting:
                Counter(label: "\(prefix)_stream_reconnects_total", dimensions: dimensions, factory: factory)
                    .increment()
            case .streamEnded(_, _, let error):
                let outcome = error == nil ? "success" : error is CancellationError ? "cancelled" : "failure"
                Counter(
                    label: "\(prefix)_streams_total", dimensions: dimensions + [("outcome", outcome)], factory: factory
                ).increment()
            case .started, .adapted, .sent, .transferFailed, .responseHead, .decision:
                break
            }
        }

        /// Counts a request, and records its duration unless it is `nil` (a connection of an event stream).
        private func recordCall(_ dimensions: [(String, String)], _ duration: Duration?) {
            Counter(label: "\(prefix)_requests_total", dimensions: dimensions, factory: factory).increment()
            guard let duration else { return }
            Timer(label: "\(prefix)_request_duration_seconds", dimensions: dimensions, factory: factory)
                .record(duration: duration)
        }

        /// `2xx` for 200…299, and so on; `none` without a status.
        static func statusClass(_ status: HTTPResponse.Status?) -> String {
            guard let status, (100..<600).contains(status.code) else { return "none" }
            return "\(status.code / 100)xx"
        }
    }
#endif
