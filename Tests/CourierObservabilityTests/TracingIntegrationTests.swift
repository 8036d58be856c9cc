import Courier
import CourierAsyncHTTPClient
import CourierObservability
import CourierTestServer
import Foundation
import HTTPTypes
import InMemoryTracing
import Testing
import Tracing

/// Tracing over a real socket: the embedded server receives each attempt's W3C `traceparent`.
@Suite("Tracing over AsyncHTTPClient", .timeLimit(.minutes(1)))
struct TracingIntegrationTests {
    private struct Headers: Request {
        struct Response: Decodable, Sendable { let headers: [String: String] }
        var path: String { "/headers" }
    }

    @Test("the embedded server receives the attempt span's traceparent, and the spans are finished")
    func traceparentArrives() async throws {
        try await withTestServer { try await check($0) }
    }

    private func check(_ server: TestServer) async throws {
        let tracer = W3CTestTracer()
        let tracing = TracingMonitor(tracer: tracer)
        let recorder = RecordingMonitor(forwardingTo: tracing)
        var configuration = Client.Configuration()
        configuration.adapters.append(tracing)
        configuration.monitors = [recorder]
        let client = Client(
            server: Server(baseURL: server.baseURL), transport: AsyncHTTPClientTransport(),
            configuration: configuration)

        let echo = try await client.send(Headers())
        await recorder.waitForCalls(1)

        let received = try #require(echo.headers.first { $0.key.lowercased() == "traceparent" }?.value)
        #expect(isTraceparent(received), "\(received)")
        let attempt = try #require(tracer.finishedSpans.first { $0.operationName == "GET" })
        #expect(received == "00-\(attempt.traceID)-\(attempt.spanID)-01")
        #expect(attempt.attributes["http.response.status_code"]?.toSpanAttribute() == .int64(200))
        #expect(attempt.attributes["server.address"]?.toSpanAttribute() == .string("127.0.0.1"))
        let call = try #require(tracer.finishedSpans.first { $0.operationName == "Headers" })
        #expect(attempt.parentSpanID == call.spanID)
    }
}
