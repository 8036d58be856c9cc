import Courier
import CourierObservability
import CourierOpenAPI
import CourierTestServer
import Foundation
import HTTPTypes
import InMemoryTracing
import Logging
import MetricsTestKit
import OpenAPIRuntime
import Testing

/// The generated client (Tests/CourierOpenAPITests/openapi.yaml, by swift-openapi-generator's build plugin) on
/// ``CourierTransport``, against the embedded server, on both Courier transports: bodies, statuses, errors and the
/// operation ID in what Courier reports.
@Suite("CourierTransport: a generated client", .timeLimit(.minutes(2)))
struct CourierTransportTests {
    @Test(
        "a JSON GET with a query decodes; the operation ID names its events and its log line",
        arguments: TransportKind.all)
    func jsonGet(transport: TransportKind) async throws {
        try await withTestServer { server in
            let events = EventCapture()
            let logs = LogCapture()
            let courier = makeCourier(transport, server.baseURL, events: events) { $0.logger = logs.logger() }
            let echo = try await generatedClient(courier).getEcho(query: .init(name: "Ada Lovelace & co")).ok.body.json

            #expect(echo.args?.additionalProperties["name"] == "Ada Lovelace & co")
            let seen = await events.untilCallsEnded()
            #expect(!seen.isEmpty && seen.allSatisfy { $0.requestName == "getEcho" })
            let line = try #require(logs.allText.first { $0.hasPrefix("GET ") })
            #expect(line.contains("/get?name=Ada%20Lovelace%20%26%20co → 200"), "\(line)")
            #expect(line.contains("openapi.operation_id") && line.contains("getEcho"), "\(line)")
        }
    }

    @Test("the operation ID names the log line when only the success line's level is enabled")
    func operationIDAtInfo() async throws {
        try await withTestServer { server in
            let logs = LogCapture()
            let courier = makeCourier(.asyncHTTPClient, server.baseURL) {
                $0.logger = logs.logger(level: .info)
                $0.callLogLevel = .info
            }
            _ = try await generatedClient(courier).getEcho(query: .init(name: "Ada")).ok.body.json
            let line = try #require(logs.allText.first { $0.hasPrefix("GET ") })
            #expect(line.contains("openapi.operation_id") && line.contains("getEcho"), "\(line)")
        }
    }

    @Test(
        "a JSON, form or multipart body reaches the server as the generated code encoded it",
        arguments: TransportKind.all)
    func requestBodies(transport: TransportKind) async throws {
        try await withTestServer { server in
            let api = try generatedClient(makeCourier(transport, server.baseURL))

            try await Scenarios.echoesBodies(api)
            let json = try await api.postAnything(body: .json(.init(name: "Ada"))).ok.body.json
            #expect(json.headers.additionalProperties["Content-Type"] == "application/json; charset=utf-8")
        }
    }

    @Test(
        "a status the document does not list reaches the generated code as undocumented", arguments: TransportKind.all)
    func undocumentedStatus(transport: TransportKind) async throws {
        try await withTestServer { server in
            let api = try generatedClient(makeCourier(transport, server.baseURL))
            try await Scenarios.passesUndocumentedStatuses(api, [418, 404])
        }
    }

    @Test(
        "a Courier failure is a ClientError whose underlying error is the CourierError, with no secret in it",
        arguments: TransportKind.all)
    func errors(transport: TransportKind) async throws {
        try await withTestServer { server in
            let secret = "SECRET-\(UUID().uuidString)"
            let courier = makeCourier(transport, server.baseURL) { $0.adapters.append(.bearer { secret }) }
            let api = try generatedClient(courier, configuration: .init(decisions: [ValidateStatusDecision()]))

            let error = try await #require(throws: ClientError.self) { try await api.getStatus(path: .init(code: 404)) }
            let underlying = try #require(error.underlyingError as? CourierError)
            #expect(underlying.code == .unacceptableStatus)
            #expect(underlying.response?.status.code == 404)
            #expect(error.operationID == "getStatus")
            // The secret went out (the error's request names the header), and is in no description.
            #expect(underlying.request?.headerFields[.authorization] != nil)
            for text in ["\(error)", error.localizedDescription, "\(underlying)", String(reflecting: underlying)] {
                #expect(!text.contains(secret), "\(text)")
            }
        }
    }

    @Test(
        "a redirect to an app's scheme reaches the generated code as its 3xx; one to file: does too, unfollowed",
        arguments: TransportKind.all)
    func foreignSchemeRedirect(transport: TransportKind) async throws {
        try await withTestServer { server in
            let transport = CourierTransport(client: makeCourier(transport, server.baseURL))
            for target in ["myapp://callback?code=abc&state=xyz", "file:///etc/passwd"] {
                var query = URLComponents()
                query.queryItems = [
                    URLQueryItem(name: "url", value: target), URLQueryItem(name: "status_code", value: "302"),
                ]
                let request = HTTPRequest(
                    method: .get, scheme: nil, authority: nil, path: "/redirect-to?\(query.percentEncodedQuery ?? "")")
                // Before: the call failed with invalidRedirect, and the generated code never saw the response. The
                // Location arrives as sent: the code next to a state is a secret the log lines redact.
                let (response, body) = try await transport.send(
                    request, body: nil, baseURL: server.baseURL, operationID: "redirectTo")
                #expect(response.status.code == 302)
                #expect(response.headerFields[.location] == target)
                #expect(body != nil)  // the 3xx's own body, as generated code may read it
            }
        }
    }

    @Test("a refused connection is a ClientError over the CourierError", arguments: TransportKind.all)
    func refusedConnection(transport: TransportKind) async throws {
        let server = try await TestServer.start()
        let baseURL = server.baseURL
        try await server.shutdown()
        let courier = makeCourier(transport, baseURL) { $0.retryPolicy = .disabled }
        let error = try await #require(throws: ClientError.self) {
            try await generatedClient(courier).getEcho(query: .init())
        }
        let underlying = try #require(error.underlyingError as? CourierError)
        #expect(underlying.stage == .transport, "\(underlying)")
    }

    @Test("the operation ID names the tracing span and, when enabled, the metrics' request dimension")
    func operationIDInTelemetry() async throws {
        try await withTestServer { server in
            let tracer = InMemoryTracer()
            let tracing = TracingMonitor(tracer: tracer)
            let metrics = TestMetrics()
            let events = EventCapture(forwardingTo: [
                tracing, MetricsMonitor(factory: metrics, includesRequestName: true),
            ])
            let courier = makeCourier(.asyncHTTPClient, server.baseURL, events: events) { $0.adapters.append(tracing) }
            _ = try await generatedClient(courier).getEcho(query: .init(name: "x")).ok.body.json
            _ = await events.untilCallsEnded()

            #expect(tracer.finishedSpans.contains { $0.operationName == "getEcho" })
            let counter = try metrics.expectCounter(
                "courier_requests_total",
                [
                    ("method", "GET"), ("environment", "production"), ("request", "getEcho"), ("outcome", "success"),
                    ("status_class", "2xx"),
                ])
            #expect(counter.totalValue == 1)
        }
    }

    /// A direct call through the Courier client, with a short timeout.
    private struct Other: CourierCore.Request {
        typealias Response = Data
        var path: String { "/other" }
        var timeout: Duration? { .seconds(1) }
    }

    @Test(
        "with call logging on, a generated call holds a slot of the client's maxConcurrentRequests like any call",
        arguments: TransportKind.all)
    func concurrencyLimitWithLogging(transport: TransportKind) async throws {
        try await withTestServer { server in
            let (held, hold) = AsyncStream<Void>.makeStream()
            let (released, release) = AsyncStream<Void>.makeStream()
            server.register("GET", "/get") { _ in
                hold.yield()
                for await _ in released { break }
                return .json(#"{"args": {}, "headers": {}, "url": "/get"}"#)
            }
            server.register("GET", "/other") { _ in .text("other") }
            let logs = LogCapture()
            let courier = makeCourier(transport, server.baseURL) {
                $0.logger = logs.logger()
                $0.maxConcurrentRequests = 1
            }
            let api = try generatedClient(courier)
            async let generated = try? api.getEcho(query: .init(name: "held"))
            for await _ in held { break }
            // The generated call has the only slot: this one waits for it until its timeout, and is never sent. With
            // a limiter of its own per logged operation, the generated call took no slot of this client's.
            let error = await #expect(throws: CourierError.self) { try await courier.send(Other()) }
            #expect(error?.code == .timedOut, "\(String(describing: error))")
            #expect(server.requestCount == 1)
            release.yield()
            _ = await generated
        }
    }
}
