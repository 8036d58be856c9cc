import Courier
import CourierObservability
import CourierTesting
import Foundation
import HTTPTypes
import MetricsTestKit
import Testing

/// swift-metrics counters and timers from call events, with bounded labels.
@Suite("MetricsMonitor", .timeLimit(.minutes(1)))
struct MetricsMonitorTests {
    private static let base = URL(string: "https://api.example.com/v1")!

    private static func client(
        _ metrics: TestMetrics,
        includesRequestName: Bool = false,
        configure: (inout Client.Configuration) -> Void = { _ in }
    ) -> (Client, MockTransport, RecordingMonitor) {
        let mock = MockTransport()
        let recorder = RecordingMonitor(
            forwardingTo: MetricsMonitor(factory: metrics, includesRequestName: includesRequestName))
        var configuration = Client.Configuration(retryPolicy: .disabled)
        configuration.monitors = [recorder]
        configure(&configuration)
        return (Client(server: Server(baseURL: base), transport: mock, configuration: configuration), mock, recorder)
    }

    @Test("success and failure: requests_total and the duration timer by method, environment, outcome, status class")
    func requestsAndDurations() async throws {
        let metrics = TestMetrics()
        let (client, mock, recorder) = Self.client(metrics)
        mock.stub(.get, "/v1/users/42", with: .text("ok"))
        mock.stub(.delete, "/v1/users/43", with: .status(404))
        _ = try await client.send(Call(path: "/users/42"))
        await #expect(throws: CourierError.self) { try await client.send(Call(method: .delete, path: "/users/43")) }
        await recorder.waitForCalls(2)

        let success = try metrics.expectCounter(
            "courier_requests_total",
            [("method", "GET"), ("environment", "production"), ("outcome", "success"), ("status_class", "2xx")])
        #expect(success.totalValue == 1)
        let failure = try metrics.expectCounter(
            "courier_requests_total",
            [("method", "DELETE"), ("environment", "production"), ("outcome", "failure"), ("status_class", "4xx")])
        #expect(failure.totalValue == 1)
        let failures = try metrics.expectCounter(
            "courier_failures_total",
            [("method", "DELETE"), ("environment", "production"), ("code", "unacceptableStatus")])
        #expect(failures.totalValue == 1)
        let timer = try metrics.expectTimer(
            "courier_request_duration_seconds",
            [("method", "GET"), ("environment", "production"), ("outcome", "success"), ("status_class", "2xx")])
        let nanoseconds = try #require(timer.lastValue)
        guard case .finished(_, let duration, _)? = recorder.events.first(where: { $0.kind.isFinished })?.kind else {
            throw Failure("no finished event")
        }
        #expect(
            nanoseconds == duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
        )
    }

    @Test("retries, refreshes and cache results are counted; no label holds a path, a query or an ID")
    func retriesAndBoundedLabels() async throws {
        let metrics = TestMetrics()
        let (client, mock, recorder) = Self.client(metrics) {
            $0.retryPolicy = RetryPolicy(maxRetries: 2, backoff: .none)
        }
        mock.stub(.get, "/v1/users/42", with: [.status(503), .status(502), .text("ok")])
        _ = try await client.send(Call(path: "/users/42", query: ["access_token": "abc123"]))
        await recorder.waitForCalls(1)

        #expect(metrics.counterTotal(label: "courier_retries_total", dimensions: [("method", "GET")]) == 2)
        #expect(metrics.counterTotal(label: "courier_requests_total") == 1)
        let labels =
            metrics.counters.flatMap { [$0.label] + $0.dimensions.flatMap { [$0.0, $0.1] } }
            + metrics.timers.flatMap { [$0.label] + $0.dimensions.flatMap { [$0.0, $0.1] } }
        #expect(!labels.isEmpty)
        for label in labels {
            #expect(!label.contains("/") && !label.contains("42") && !label.contains("abc123"), "\(label)")
        }
    }

    @Test("the request dimension is added only when asked for")
    func requestNameDimension() async throws {
        let metrics = TestMetrics()
        let (client, mock, recorder) = Self.client(metrics, includesRequestName: true)
        mock.stub(.get, "/v1/probe", with: .text("ok"))
        _ = try await client.send(Call())
        await recorder.waitForCalls(1)
        #expect(metrics.counterTotal(label: "courier_requests_total", dimensions: [("request", "Call")]) == 1)
    }

    @Test("the cache, refresh and cancellation events map to their metrics")
    func eventMapping() async throws {
        let metrics = TestMetrics()
        let monitor = MetricsMonitor(factory: metrics, prefix: "app")
        func event(_ kind: CourierEvent.Kind) -> CourierEvent {
            CourierEvent(
                callID: .init(rawValue: 1), requestName: "GetUser", method: .get, environment: .staging, attempt: 1,
                kind: kind)
        }
        await monitor.handle(event(.cached(.hit)))
        await monitor.handle(event(.cached(.stored)))
        await monitor.handle(event(.refreshed))
        await monitor.handle(event(.failed(error: CancellationError(), status: nil, duration: .milliseconds(3))))

        #expect(
            try metrics.expectCounter(
                "app_cache_total", [("method", "GET"), ("environment", "staging"), ("result", "hit")]
            ).totalValue == 1)
        #expect(
            try metrics.expectCounter(
                "app_cache_total", [("method", "GET"), ("environment", "staging"), ("result", "stored")]
            ).totalValue == 1)
        #expect(try metrics.expectCounter("app_refreshes_total", [("environment", "staging")]).totalValue == 1)
        #expect(
            try metrics.expectCounter(
                "app_requests_total",
                [("method", "GET"), ("environment", "staging"), ("outcome", "cancelled"), ("status_class", "none")]
            ).totalValue == 1)
        #expect(
            try metrics.expectCounter(
                "app_failures_total", [("method", "GET"), ("environment", "staging"), ("code", "cancelled")]
            ).totalValue == 1)
    }

    private struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

extension CourierEvent.Kind {
    var isFinished: Bool {
        if case .finished = self { return true }
        return false
    }
}
