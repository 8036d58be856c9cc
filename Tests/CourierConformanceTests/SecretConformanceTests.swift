import Courier
import CourierCore
import CourierTestServer
import Foundation
import HTTPTypes
import Logging
import Testing

extension Conformance {
    /// Issue #13 and reliability row 46 on real sockets: on every transport, a call carrying secrets in its query,
    /// its `Authorization` header and a user-registered header fails in the ways a network fails, and no string
    /// Courier produces (error description and message, log lines and their metadata, events, the cURL line)
    /// contains any of them, whatever the transport's own error says.
    @Suite("Conformance: secrets never leak", .timeLimit(.minutes(3)))
    struct SecretConformanceTests {
        /// The prefix of every planted secret.
        static let marker = "PLANTED"
        static let tenantHeaderName = HTTPField.Name("X-Tenant-Secret")!
        static let locationQuery = "sig=PLANTED-location-sig&X-Goog-Signature=PLANTED-location-goog"

        struct Planted: Request {
            typealias Response = Data
            var path: String
            var query: Parameters? = [
                "api-key": "PLANTED-api-key", "key": "PLANTED/google+key", "signature": "PLANTED-signature",
                "X-Amz-Signature": "PLANTED-amz-signature", "tenant_token": "PLANTED-tenant-query", "page": 2,
            ]
            var headers: RequestHeaders = ["X-Tenant-Secret": "PLANTED-tenant-header"]
        }

        /// Keeps every log line with its metadata.
        final class LogCapture: Sendable {
            private let lines = LockedBox<[String]>([])

            var all: [String] { lines.withLock { $0 } }

            func logger() -> Logger {
                var logger = Logger(label: "courier.secret-conformance") { _ in Handler(capture: self) }
                logger.logLevel = .trace
                return logger
            }

            struct Handler: LogHandler {
                let capture: LogCapture
                var metadata: Logger.Metadata = [:]
                var logLevel: Logger.Level = .trace

                subscript(metadataKey key: String) -> Logger.Metadata.Value? {
                    get { metadata[key] }
                    set { metadata[key] = newValue }
                }

                func log(event: LogEvent) {
                    let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
                    capture.lines.withLock { $0.append("\(event.message) \(merged)") }
                }
            }
        }

        /// Keeps every event; ``untilCallEnded()`` waits for the call's last one.
        final class EventCapture: EventMonitor {
            private let stream: AsyncStream<CourierEvent>
            private let continuation: AsyncStream<CourierEvent>.Continuation

            init() { (stream, continuation) = AsyncStream.makeStream() }

            func handle(_ event: CourierEvent) async { continuation.yield(event) }

            func untilCallEnded() async -> [CourierEvent] {
                var events: [CourierEvent] = []
                for await event in stream {
                    events.append(event)
                    switch event.kind {
                    case .finished, .failed: return events
                    default: continue
                    }
                }
                return events
            }
        }

        /// The requests as they left the adapters, for their cURL descriptions.
        final class SentRequests: Sendable {
            let requests = LockedBox<[OutgoingRequest]>([])
        }

        /// Sends a planted request to `baseURL` on `transport` and returns every string Courier produced for it.
        static func strings(
            of request: Planted,
            to baseURL: URL,
            on transport: TransportKind
        ) async throws -> (error: CourierError?, texts: [(place: String, text: String)]) {
            let logs = LogCapture()
            let events = EventCapture()
            let sent = SentRequests()
            var redactor = Redactor.default
            redactor.sensitiveHeaderNames.insert(tenantHeaderName)
            redactor.sensitiveQueryKeys.insert("tenant_token")
            let configuration = Client.Configuration(
                adapters: [
                    .bearer { "PLANTED-bearer" }, UserAgentAdapter.courier,
                    .custom("capture") { request, _ in
                        sent.requests.withLock { $0.append(request) }
                        return request
                    },
                ],
                retryPolicy: .disabled,
                redactor: redactor,
                logger: logs.logger(),
                monitors: [events]
            )
            let client = Client(
                server: Server(baseURL: baseURL), transport: transport.make(), configuration: configuration)
            var texts: [(String, String)] = []
            var thrown: CourierError?
            do {
                _ = try await client.send(request)
            } catch let error as CourierError {
                thrown = error
                var dumped = ""
                dump(error, to: &dumped)
                texts += [
                    ("dump(error)", dumped),
                    ("String(describing: error)", String(describing: error)),
                    ("error.message", error.message ?? ""),
                    ("error.localizedDescription", error.localizedDescription),
                    ("error.bodyExcerpt", error.bodyExcerpt ?? ""),
                    ("error.request", String(describing: error.request)),
                    ("error.response", String(describing: error.response)),
                ]
                #expect(sent.requests.withLock { !$0.isEmpty }, "the request was never adapted: \(error)")
            }
            for event in await events.untilCallEnded() {
                texts.append(("event", String(describing: event)))
                if case .adapted(let head) = event.kind { texts.append(("adapted event", "\(head.headerFields)")) }
                if case .responseHead(let head) = event.kind {
                    texts.append(("responseHead event", "\(head.headerFields)"))
                }
            }
            texts += logs.all.map { ("log line", $0) }
            texts += sent.requests.withLock { $0 }.map { ("cURLDescription", $0.cURLDescription(redactor: redactor)) }
            return (thrown, texts)
        }

        static func expectNoSecret(in texts: [(place: String, text: String)], transport: TransportKind) {
            #expect(texts.contains { $0.place == "log line" })
            for (place, text) in texts {
                #expect(!text.contains(marker), "\(transport.name): a planted secret leaked in \(place): \(text)")
            }
        }

        @Test(
            "a refused port: the transport's error names the URL; Courier's strings do not",
            arguments: TransportKind.all)
        func refusedPort(transport: TransportKind) async throws {
            let server = try await TestServer.start()
            let baseURL = server.baseURL
            try await server.shutdown()
            let (error, texts) = try await Self.strings(of: Planted(path: "/get"), to: baseURL, on: transport)
            let thrown = try #require(error)
            #expect(thrown.stage == .transport, "\(thrown)")
            Self.expectNoSecret(in: texts, transport: transport)
            let underlying = thrown.underlyingError.map { "\($0)" } ?? ""
            print(
                "conformance: \(transport.name) · refused port, underlying names a secret: \(underlying.contains(Self.marker))"
            )
        }

        @Test("a 503 with secrets in the request", arguments: TransportKind.all)
        func serviceUnavailable(transport: TransportKind) async throws {
            try await ServerKind.embedded.withBaseURL { baseURL in
                let (error, texts) = try await Self.strings(
                    of: Planted(path: "/status/503"), to: baseURL, on: transport)
                #expect(error?.code == .unacceptableStatus, "\(String(describing: error))")
                Self.expectNoSecret(in: texts, transport: transport)
            }
        }

        @Test("a 404 whose body echoes the query and the credentials", arguments: TransportKind.all)
        func notFoundEchoingQuery(transport: TransportKind) async throws {
            try await withTestServer { server in
                server.register("GET", "/echo-404") { request in
                    let credentials = [request.header("Authorization"), request.header("X-Tenant-Secret")]
                        .compactMap { $0 }.joined(separator: ", ")
                    return .text("no such thing: \(request.uri) (sent with \(credentials))", status: 404)
                }
                let (error, texts) = try await Self.strings(
                    of: Planted(path: "/echo-404"), to: server.baseURL, on: transport)
                #expect(error?.code == .unacceptableStatus, "\(String(describing: error))")
                #expect(
                    error?.bodyExcerpt?.contains("no such thing: /echo-404?") == true, "\(String(describing: error))")
                Self.expectNoSecret(in: texts, transport: transport)
            }
        }

        @Test(
            "a response's session cookie (under a name the redactor does not know) and token header reach no log line",
            arguments: TransportKind.all)
        func responseSecretsWithTraceLogger(transport: TransportKind) async throws {
            try await withTestServer { server in
                server.register("GET", "/session") { _ in
                    TestServerResponse(
                        status: 200,
                        headers: [
                            ("Set-Cookie", "JSESSIONID=PLANTED-session; Path=/; HttpOnly"),
                            ("Authorization", "Bearer PLANTED-response-token"),
                        ],
                        body: Array("{}".utf8))
                }
                let (error, texts) = try await Self.strings(
                    of: Planted(path: "/session"), to: server.baseURL, on: transport)
                #expect(error == nil, "\(String(describing: error))")
                Self.expectNoSecret(in: texts, transport: transport)
            }
        }

        @Test("a redirect whose Location carries a secret, to a 404 that echoes it", arguments: TransportKind.all)
        func redirectCarryingSecret(transport: TransportKind) async throws {
            try await withTestServer { server in
                server.register("GET", "/hop") { _ in
                    TestServerResponse(status: 302, headers: [("Location", "/echo-404?\(Self.locationQuery)")])
                }
                server.register("GET", "/echo-404") { request in .text("no such thing: \(request.uri)", status: 404) }
                let (error, texts) = try await Self.strings(
                    of: Planted(path: "/hop"), to: server.baseURL, on: transport)
                #expect(error?.code == .unacceptableStatus, "\(String(describing: error))")
                #expect(
                    error?.request?.path?.hasPrefix("/echo-404?sig=<redacted>") == true, "\(String(describing: error))")
                #expect(
                    error?.bodyExcerpt?.contains("no such thing: /echo-404?") == true, "\(String(describing: error))")
                Self.expectNoSecret(in: texts, transport: transport)
            }
        }
    }
}
