import Courier
import CourierObservability
import CourierTesting
import Foundation
import HTTPTypes
import InMemoryTracing
import Testing
import Tracing

/// A span per call, a child span per attempt, and the attempt's `traceparent` on the wire.
@Suite("TracingMonitor", .timeLimit(.minutes(1)))
struct TracingMonitorTests {
    private static let base = URL(string: "https://api.example.com")!

    private static func client(
        _ tracer: W3CTestTracer,
        retries: Int = 0
    ) -> (Client, MockTransport, RecordingMonitor) {
        let mock = MockTransport()
        let tracing = TracingMonitor(tracer: tracer)
        let recorder = RecordingMonitor(forwardingTo: tracing)
        var configuration = Client.Configuration(retryPolicy: RetryPolicy(maxRetries: retries, backoff: .none))
        configuration.adapters.append(tracing)
        configuration.monitors = [recorder]
        return (Client(server: Server(baseURL: base), transport: mock, configuration: configuration), mock, recorder)
    }

    @Test("a retried call: one call span, two attempt spans under it, each attempt's traceparent sent")
    func spansPerCallAndAttempt() async throws {
        let tracer = W3CTestTracer()
        let (client, mock, recorder) = Self.client(tracer, retries: 1)
        mock.stub(.get, "/users/42", with: [.status(503), .text("ok")])
        #expect(try await client.send(Call(path: "/users/42", query: ["access_token": "abc"])) == "ok")
        await recorder.waitForCalls(1)

        let spans = tracer.finishedSpans
        #expect(tracer.activeSpans.isEmpty)
        let call = try #require(spans.first { $0.operationName == "Call" })
        let attempts = spans.filter { $0.operationName == "GET" }
        #expect(spans.count == 3)
        #expect(attempts.count == 2)
        #expect(call.parentSpanID == nil)
        #expect(call.kind == .internal)
        #expect(call.attributes["courier.attempts"]?.toSpanAttribute() == .int64(2))
        #expect(call.attributes["http.response.status_code"]?.toSpanAttribute() == .int64(200))
        #expect(call.events.map(\.name) == ["retry"])
        for attempt in attempts {
            #expect(attempt.parentSpanID == call.spanID)
            #expect(attempt.traceID == call.traceID)
            #expect(attempt.kind == .client)
            #expect(attempt.startInstant.nanosecondsSinceEpoch >= call.startInstant.nanosecondsSinceEpoch)
            #expect(attempt.endInstant.nanosecondsSinceEpoch <= call.endInstant.nanosecondsSinceEpoch)
        }
        let statuses = attempts.map { $0.attributes["http.response.status_code"]?.toSpanAttribute() }
        #expect(statuses == [.int64(503), .int64(200)])
        let resends = attempts.map { $0.attributes["http.request.resend_count"]?.toSpanAttribute() }
        #expect(resends == [nil, .int64(1)])  // only on a resend, as the conventions say
        let url = attempts.first?.attributes["url.full"]?.toSpanAttribute()
        #expect(url == .string("https://api.example.com/users/42?access_token=<redacted>"))

        let sent = mock.recordedRequests.map { $0.head.headerFields[HTTPField.Name("traceparent")!] }
        #expect(sent == attempts.map { "00-\($0.traceID)-\($0.spanID)-01" })
        #expect(sent.allSatisfy(isTraceparent))
    }

    @Test("the call span is a child of the caller's current span")
    func callSpanUnderCallersSpan() async throws {
        let tracer = W3CTestTracer()
        let (client, mock, recorder) = Self.client(tracer)
        mock.stub(.get, "/probe", with: .text("ok"))
        let parent = tracer.startSpan("screen", context: .topLevel)
        _ = try await InstrumentationContext.$current.withValue(parent.context) {
            try await client.send(Call())
        }
        parent.end()
        await recorder.waitForCalls(1)
        let call = try #require(tracer.finishedSpans.first { $0.operationName == "Call" })
        #expect(call.parentSpanID == parent.spanID)
        #expect(call.traceID == parent.traceID)
    }

    @Test("a call that fails before it is sent is in the caller's trace, and its span covers the adapters")
    func failureBeforeSendingUnderCallersSpan() async throws {
        let tracer = W3CTestTracer()
        let (client, _, recorder) = Self.client(tracer)
        let parent = tracer.startSpan("screen", context: .topLevel)
        await #expect(throws: CourierError.self) {
            try await InstrumentationContext.$current.withValue(parent.context) {
                var call = Call()
                call.extraAdapters = [.custom("explode") { _, _ in throw Boom() }]
                return try await client.send(call)
            }
        }
        parent.end()
        await recorder.waitForCalls(1)
        let call = try #require(tracer.finishedSpans.first { $0.operationName == "Call" })
        #expect(call.parentSpanID == parent.spanID)
        #expect(call.traceID == parent.traceID)
        #expect(call.status?.code == .error)
        #expect(call.startInstant.nanosecondsSinceEpoch <= call.endInstant.nanosecondsSinceEpoch)
    }

    @Test("a failed call: error status and error.type on both spans; a failure before sending gets a call span")
    func failures() async throws {
        let tracer = W3CTestTracer()
        let (client, mock, recorder) = Self.client(tracer)
        mock.stub(.get, "/probe", with: .status(500))
        await #expect(throws: CourierError.self) { try await client.send(Call()) }
        await #expect(throws: CourierError.self) {
            var call = Call()
            call.extraAdapters = [.custom("explode") { _, _ in throw Boom() }]
            return try await client.send(call)
        }
        await recorder.waitForCalls(2)

        let spans = tracer.finishedSpans
        #expect(tracer.activeSpans.isEmpty)
        let calls = spans.filter { $0.operationName == "Call" }
        #expect(calls.count == 2)
        #expect(calls.allSatisfy { $0.status?.code == .error && $0.errors.count == 1 })
        #expect(
            calls.map { $0.attributes["error.type"]?.toSpanAttribute() } == [
                .string("unacceptableStatus"), .string("adapterFailed"),
            ])
        let attempt = try #require(spans.filter { $0.operationName == "GET" }.onlyElement)
        #expect(attempt.status?.code == .error)
        #expect(attempt.attributes["http.response.status_code"]?.toSpanAttribute() == .int64(500))
        #expect(attempt.parentSpanID == calls[0].spanID)
    }

    @Test("an attempt that got no response is an error span with the failure's code; server.port is set")
    func transferFailures() async throws {
        let tracer = W3CTestTracer()
        let (client, mock, recorder) = Self.client(tracer, retries: 1)
        let reset = CourierError(code: .connectionReset, stage: .transport, message: "reset by peer")
        let refused = CourierError(code: .connectionRefused, stage: .transport, message: "refused")
        mock.stub(
            .get, "/probe",
            with: [.status(200, fault: .failBeforeResponse(reset)), .status(200, fault: .failBeforeResponse(refused))])
        await #expect(throws: CourierError.self) { try await client.send(Call()) }
        await recorder.waitForCalls(1)

        #expect(tracer.activeSpans.isEmpty)
        let attempts = tracer.finishedSpans.filter { $0.operationName == "GET" }
        #expect(attempts.count == 2)
        #expect(attempts.allSatisfy { $0.status?.code == .error && $0.errors.count == 1 })
        #expect(
            attempts.map { $0.attributes["error.type"]?.toSpanAttribute() } == [
                .string("connectionReset"), .string("connectionRefused"),
            ])
        #expect(attempts.allSatisfy { $0.attributes["http.response.status_code"] == nil })
        #expect(attempts.allSatisfy { $0.attributes["server.port"]?.toSpanAttribute() == .int64(443) })
        let transferFailures = recorder.events.filter { if case .transferFailed = $0.kind { true } else { false } }
        #expect(transferFailures.map(\.attempt) == [1, 2])
    }

    @Test("an attempt whose body was still coming when the call failed (its deadline) ends as an error span")
    func attemptOpenWhenTheCallFails() async throws {
        let tracer = W3CTestTracer()
        let (client, mock, recorder) = Self.client(tracer)
        mock.stub(.get, "/probe", with: .status(200, fault: .stallBody(afterBytes: 0)))
        var call = Call()
        call.timeout = .milliseconds(300)
        let error = await #expect(throws: CourierError.self) { try await client.send(call) }
        #expect(error?.code == .timedOut)
        await recorder.waitForCalls(1)

        #expect(tracer.activeSpans.isEmpty)
        let attempt = try #require(tracer.finishedSpans.filter { $0.operationName == "GET" }.onlyElement)
        #expect(attempt.attributes["http.response.status_code"]?.toSpanAttribute() == .int64(200))
        #expect(attempt.status?.code == .error)
        #expect(attempt.attributes["error.type"]?.toSpanAttribute() == .string("timedOut"))
    }

    @Test("a method the conventions do not know is _OTHER with its name in method_original, on a span named HTTP")
    func unknownMethod() async throws {
        let tracer = W3CTestTracer()
        let (client, mock, recorder) = Self.client(tracer)
        let purge = try #require(HTTPRequest.Method("PURGE"))
        mock.stub(purge, "/probe", with: .text("ok"))
        _ = try await client.send(Call(method: purge))
        await recorder.waitForCalls(1)

        let attempt = try #require(tracer.finishedSpans.filter { $0.operationName == "HTTP" }.onlyElement)
        #expect(attempt.kind == .client)
        #expect(attempt.attributes["http.request.method"]?.toSpanAttribute() == .string("_OTHER"))
        #expect(attempt.attributes["http.request.method_original"]?.toSpanAttribute() == .string("PURGE"))
        let call = try #require(tracer.finishedSpans.filter { $0.operationName == "Call" }.onlyElement)
        #expect(call.attributes["http.request.method"]?.toSpanAttribute() == .string("_OTHER"))
        #expect(attempt.attributes["http.request.resend_count"] == nil)
    }

    @Test("as an adapter alone (no monitors) it injects nothing and starts no span")
    func adapterWithoutMonitor() async throws {
        let tracer = W3CTestTracer()
        let mock = MockTransport()
        var configuration = Client.Configuration(retryPolicy: .disabled)
        configuration.adapters.append(TracingMonitor(tracer: tracer))
        let client = Client(server: Server(baseURL: Self.base), transport: mock, configuration: configuration)
        mock.stub(.get, "/probe", with: .text("ok"))
        _ = try await client.send(Call())
        #expect(mock.recordedRequests.first?.head.headerFields[HTTPField.Name("traceparent")!] == nil)
        #expect(tracer.activeSpans.isEmpty && tracer.finishedSpans.isEmpty)
    }

    @Test("addTracing installs the monitor as the last adapter and as a monitor")
    func addTracing() {
        var configuration = Client.Configuration()
        let count = configuration.adapters.count
        configuration.addTracing(TracingMonitor(tracer: W3CTestTracer()))
        #expect(configuration.adapters.count == count + 1)
        #expect(configuration.adapters.last?.name == "traceContext")
        #expect(configuration.monitors.count == 1)
    }
}
