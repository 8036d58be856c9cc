import Courier
import CourierObservability
import CourierTesting
import Foundation
import HTTPTypes
import InMemoryTracing
import Logging
import MetricsTestKit
import Testing

/// Reliability row 46: secrets are redacted in every output — log lines and their metadata, metric labels, span
/// names, attributes, events and errors, monitor events, and the error's descriptions.
@Suite("Redaction in every output (row 46)", .timeLimit(.minutes(1)))
struct RedactionTests {
    private static let secrets = [
        "T0KEN-SECRET", "C00KIE-SECRET", "PASSW0RD-SECRET", "QUERY-SECRET", "SET-C00KIE-SECRET",
    ]

    @Test("row 46: a token, a cookie, password= in a form body and a token in the query appear in no output")
    func noSecretInAnyOutput() async throws {
        let logs = LogCapture()
        let metrics = TestMetrics()
        let tracer = W3CTestTracer()
        let tracing = TracingMonitor(tracer: tracer)
        let recorder = RecordingMonitor(forwardingTo: tracing)
        let metricsRecorder = RecordingMonitor(
            forwardingTo: MetricsMonitor(factory: metrics, includesRequestName: true))
        let mock = MockTransport()
        var configuration = Client.Configuration(logger: logs.logger(level: .trace))
        configuration.adapters.append(tracing)
        configuration.monitors = [recorder, metricsRecorder]
        let client = Client(
            server: Server(baseURL: URL(string: "https://api.example.com")!), transport: mock,
            configuration: configuration)

        let setCookie: HTTPFields = [.setCookie: "session=SET-C00KIE-SECRET; HttpOnly"]
        mock.stub(
            .post, "/login",
            with: [
                .json(
                    raw: #"{"error":"no","access_token":"QUERY-SECRET","password":"PASSW0RD-SECRET"}"#, status: 500,
                    headerFields: setCookie),
                .text("welcome", headerFields: setCookie),
            ])
        let login = Call(
            method: .post,
            path: "/login",
            query: ["access_token": "QUERY-SECRET"],
            headers: ["Authorization": "Bearer T0KEN-SECRET", "Cookie": "session=C00KIE-SECRET"],
            body: .form(["user": "alice", "password": "PASSW0RD-SECRET"])
        )

        var texts: [String] = []
        do {
            _ = try await client.send(login)
            Issue.record("the first call should fail")
        } catch {
            var dumped = ""
            dump(error, to: &dumped)
            texts += ["\(error)", String(reflecting: error), (error as NSError).localizedDescription, dumped]
            if let error = error as? CourierError {
                texts += [error.description, error.localizedDescription, error.bodyExcerpt ?? ""]
                texts += [error.request.map { "\($0) \($0.headerFields)" } ?? ""]
            }
        }
        #expect(try await client.send(login) == "welcome")
        await recorder.waitForCalls(2)
        await metricsRecorder.waitForCalls(2)

        // The secrets really went out: what the server received holds them all (but the Set-Cookie one).
        let wire = mock.recordedRequests.map { "\($0.head.path ?? "") \($0.head.headerFields) \($0.bodyText ?? "")" }
        for secret in Self.secrets.dropLast() {
            #expect(wire.contains { $0.contains(secret) }, "\(secret) was not sent")
        }

        texts += logs.allText
        texts += metrics.counters.flatMap { [$0.label] + $0.dimensions.map { "\($0.0)=\($0.1)" } }
        texts += metrics.timers.flatMap { [$0.label] + $0.dimensions.map { "\($0.0)=\($0.1)" } }
        texts += tracer.finishedSpans.flatMap(\.allText)
        for event in recorder.events {
            var dumped = ""
            dump(event, to: &dumped)
            texts += [event.description, dumped]
            if case .failed(let error, _, _) = event.kind {
                texts += ["\(error)", (error as NSError).localizedDescription]
            }
        }

        #expect(logs.allText.count == 2)
        #expect(logs.allText.contains { $0.contains("Authorization: <redacted>") })
        #expect(recorder.events.contains { $0.kind.isAdapted })
        #expect(texts.contains { $0.contains("access_token=<redacted>") })
        #expect(texts.count > 40)
        for text in texts {
            for secret in Self.secrets {
                #expect(!text.contains(secret), "\(secret) leaked in: \(text)")
            }
        }
    }
}

extension CourierEvent.Kind {
    var isAdapted: Bool {
        if case .adapted = self { return true }
        return false
    }
}
