import CourierTesting
import Foundation
import HTTPTypes
import Testing

@testable import CourierCore

@Suite("EventSource: reconnects and limits", .timeLimit(.minutes(1)))
struct EventSourceTests {
    struct Notifications: Request {
        typealias Response = LiveResponse
        var path: String { "/notifications" }
    }

    static func stream(_ text: String) -> MockResponse {
        .text(text, headerFields: [.contentType: "text/event-stream"])
    }

    static func client(_ mock: MockTransport) -> Client {
        Client(server: Server(baseURL: URL(string: "https://api.example.com")!), transport: mock)
    }

    @Test(
        "after a reconnect, replayed events are skipped and new ones delivered, with or without an id field",
        arguments: [
            // The server resumes after Last-Event-ID 2: events without an `id` field carry "2", and are new.
            ("data: d\n\ndata: e\n\n", ["d", "e"]),
            // It resumes early, from 1: a, b (under 1) and c are replays; d is new.
            ("id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\nid: 3\ndata: d\n\n", ["d"]),
            // It resumes at 2: c is a replay; d and e, which name no ID, come after it and are new.
            ("id: 2\ndata: c\n\ndata: d\n\ndata: e\n\n", ["d", "e"]),
        ])
    func replaysAfterAReconnect(second: String, new: [String]) async throws {
        let mock = MockTransport()
        mock.stub(
            .get, "/notifications",
            with: [
                Self.stream("retry: 1\nid: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\n"), Self.stream(second),
                .status(204),
            ])
        var events: [String] = []
        for try await event in Self.client(mock).events(Notifications(), reconnect: ReconnectPolicy(maxReconnects: 1)) {
            events.append(event.data)
        }
        #expect(events == ["a", "b", "c"] + new)
        let resumed = mock.recordedRequests.dropFirst().first
        #expect(resumed?.head.headerFields[HTTPField.Name("Last-Event-ID")!] == "2")
    }

    @Test("a response that is not an event stream fails with unexpectedResponse, its Set-Cookie redacted")
    func notAnEventStream() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/notifications", with: .json(raw: "{}", headerFields: [.setCookie: "sid=PLANTED-sid"]))
        let error = await expectCourierError {
            for try await _ in Self.client(mock).events(Notifications()) {}
        }
        #expect(error?.code == .unexpectedResponse)
        #expect(error?.response?.headerFields[.setCookie] == Redactor.placeholder)
        #expect(!"\(String(describing: error))".contains("PLANTED"))
    }

    @Test("a connection refused as not an event stream is a failed call for the monitors, with the caller's error")
    func notAnEventStreamFailsTheCall() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/notifications", with: .json(raw: "{}"))
        let monitor = MonitorFixtures.RecordingMonitor()
        var configuration = Client.Configuration()
        configuration.monitors = [monitor]
        let client = Client(
            server: Server(baseURL: URL(string: "https://api.example.com")!), transport: mock,
            configuration: configuration)
        let error = await expectCourierError {
            for try await _ in client.events(Notifications()) {}
        }
        #expect(error?.code == .unexpectedResponse)
        let end = try #require(await monitor.events(untilCallsEnded: 1).last { $0.kind.isTerminal })
        guard case .failed(let failure, let status, _) = end.kind else {
            Issue.record("the call ended as \(end.kind), not failed")
            return
        }
        #expect((failure as? CourierError)?.code == .unexpectedResponse && status?.code == 200)
    }

    /// Accepts `quiet` connections as event streams that stay silent for `silence` and are then cut by the idle
    /// timeout; then answers 204.
    struct QuietStreams: Transport {
        let quiet: Int
        let silence: Duration
        /// Whether each stream sends a heartbeat comment and the server then ends it, instead of the idle timeout.
        var heartbeat = false
        /// A `retry:` the heartbeat carries, in milliseconds.
        var retry: Int?
        let sent = DecisionFixtures.Counter()

        func send(_ request: OutgoingRequest, context: TransportContext) async throws -> TransportResponse {
            guard sent.next() <= quiet else {
                return TransportResponse(head: HTTPResponse(status: .noContent), body: MessageBody([UInt8]()))
            }
            let silence = silence
            let heartbeat = heartbeat
            let retry = retry.map { "retry: \($0)\n" } ?? ""
            let body = AsyncThrowingStream<ArraySlice<UInt8>, any Error> { continuation in
                if heartbeat { continuation.yield(ArraySlice("\(retry): ping\n\n".utf8)) }
                // The server's silence, which the behaviour under test depends on (not a synchronisation).
                let task = Task {
                    try? await Task.sleep(for: silence)
                    if heartbeat {
                        continuation.finish()  // the server's connection lifetime
                    } else {
                        continuation.finish(throwing: CourierError(code: .idleTimeout, stage: .transport))
                    }
                }
                continuation.onTermination = { _ in task.cancel() }
            }
            var head = HTTPResponse(status: .ok)
            head.headerFields[.contentType] = "text/event-stream"
            return TransportResponse(head: head, body: MessageBody(body, length: .unknown, iterationBehavior: .single))
        }
    }

    @Test("connections kept open and quiet until the idle timeout cuts them do not spend the reconnect budget")
    func quietConnectionsKeepTheBudget() async throws {
        let transport = QuietStreams(quiet: 4, silence: .milliseconds(100))
        let client = Client(server: Server(baseURL: URL(string: "https://api.example.com")!), transport: transport)
        let policy = ReconnectPolicy(maxReconnects: 2, defaultDelay: .zero, jitter: 0, maxDelay: .milliseconds(50))
        var events = 0
        for try await _ in client.events(Notifications(), reconnect: policy) { events += 1 }
        #expect(events == 0)
        #expect(transport.sent.count == 5)
    }

    @Test("heartbeat connections shorter than a long pause keep the budget (1.1 s streams, retry: 1500)")
    func heartbeatAfterALongPauseKeepsTheBudget() async throws {
        var transport = QuietStreams(quiet: 2, silence: .milliseconds(1100))
        transport.heartbeat = true
        transport.retry = 1500
        let client = Client(server: Server(baseURL: URL(string: "https://api.example.com")!), transport: transport)
        // Each connection lives 1.1 s with a heartbeat, shorter than the 1.5 s pause the server asks for (as after an
        // outage, near maxDelay). Not "as long as the pause": the default delay bounds what it must live.
        let policy = ReconnectPolicy(
            maxReconnects: 1, defaultDelay: .milliseconds(500), jitter: 0, maxDelay: .seconds(30))
        var events = 0
        for try await _ in client.events(Notifications(), reconnect: policy) { events += 1 }
        #expect(events == 0)
        #expect(transport.sent.count == 3)
    }

    @Test(
        "a quiet stream shorter than maxDelay keeps the budget when the idle timeout cut it or a heartbeat came on it",
        arguments: [false, true])
    func quietShortConnectionsKeepTheBudget(heartbeat: Bool) async throws {
        // A heartbeat keeps the budget on a connection that lived a second at least (a greeting and a close does not).
        var transport = QuietStreams(quiet: heartbeat ? 3 : 4, silence: .milliseconds(heartbeat ? 1100 : 50))
        transport.heartbeat = heartbeat
        let client = Client(server: Server(baseURL: URL(string: "https://api.example.com")!), transport: transport)
        // Before: each connection, shorter than maxDelay, counted as a failed reconnect; the third threw
        // reconnectLimit (with the default policy, about 12 minutes into a stream that is healthy but quiet).
        let policy = ReconnectPolicy(maxReconnects: 2, defaultDelay: .zero, jitter: 0, maxDelay: .seconds(5))
        var events = 0
        for try await _ in client.events(Notifications(), reconnect: policy) { events += 1 }
        #expect(events == 0)
        #expect(transport.sent.count == (heartbeat ? 4 : 5))
    }

    /// A stream that sends one event and then fails with `error`, as a transport reports a limit.
    struct FailingStream: Transport {
        let error: CourierError
        let sent = DecisionFixtures.Counter()

        func send(_ request: OutgoingRequest, context: TransportContext) async throws -> TransportResponse {
            _ = sent.next()
            let error = error
            let body = AsyncThrowingStream<ArraySlice<UInt8>, any Error> { continuation in
                continuation.yield(ArraySlice("data: first\n\n".utf8))
                continuation.finish(throwing: error)
            }
            var head = HTTPResponse(status: .ok)
            head.headerFields[.contentType] = "text/event-stream"
            return TransportResponse(head: head, body: MessageBody(body, length: .unknown, iterationBehavior: .single))
        }
    }

    @Test("a decompression limit ends the stream like the other limits: no reconnect that would replay it")
    func decompressionLimitIsNotReconnected() async throws {
        let transport = FailingStream(error: CourierError(code: .decompressionLimit, stage: .transport))
        let client = Client(server: Server(baseURL: URL(string: "https://api.example.com")!), transport: transport)
        var events: [String] = []
        let error = await expectCourierError {
            for try await event in client.events(Notifications(), reconnect: ReconnectPolicy(defaultDelay: .zero)) {
                events.append(event.data)
            }
        }
        #expect(error?.code == .decompressionLimit)
        #expect(events == ["first"])
        // Before: reconnected (5 times with the default budget), each connection from the stream's start.
        #expect(transport.sent.count == 1)
    }

    @Test("an event ID with a control character, which no header can carry, resumes without Last-Event-ID")
    func unsendableEventID() async throws {
        let mock = MockTransport()
        mock.stub(
            .get, "/notifications",
            with: [Self.stream("retry: 1\nid: a\u{01}b\ndata: x\n\n"), Self.stream("data: y\n\n"), .status(204)])
        var events: [String] = []
        // Before: the reconnect failed with invalidHeader, which ended the sequence.
        for try await event in Self.client(mock).events(Notifications(), reconnect: ReconnectPolicy(maxReconnects: 1)) {
            events.append(event.data)
        }
        #expect(events == ["x", "y"])
        #expect(mock.recordedRequests.count == 3)
        #expect(
            mock.recordedRequests.dropFirst().allSatisfy {
                $0.head.headerFields[HTTPField.Name("Last-Event-ID")!] == nil
            })
    }

    @Test("a server whose IDs restarted (new data under IDs already delivered) loses no event after a reconnect")
    func reusedIDsWithNewData() async throws {
        let mock = MockTransport()
        mock.stub(
            .get, "/notifications",
            with: [
                Self.stream("retry: 1\nid: 1\ndata: a\n\nid: 2\ndata: b\n\nid: 3\ndata: c\n\n"),
                Self.stream("id: 1\ndata: N1\n\nid: 2\ndata: N2\n\nid: 3\ndata: N3\n\nid: 4\ndata: N4\n\n"),
                .status(204),
            ])
        var events: [String] = []
        for try await event in Self.client(mock).events(Notifications(), reconnect: ReconnectPolicy(maxReconnects: 1)) {
            events.append(event.data)
        }
        #expect(events == ["a", "b", "c", "N1", "N2", "N3", "N4"])
    }

    @Test("after a failed reconnect the pause doubles, from at least 100 ms, up to maxDelay")
    func backoffAfterFailedReconnects() {
        let policy = ReconnectPolicy(defaultDelay: .seconds(3), jitter: 0, maxDelay: .seconds(60))
        #expect((1...6).map { policy.delay(server: nil, attempt: $0) } == [3, 6, 12, 24, 48, 60].map { .seconds($0) })
        // A server's `retry: 0` reconnects at once after a drop; failures then back off from 100 ms.
        let immediate = (1...4).map { policy.delay(server: .zero, attempt: $0) }
        #expect(immediate == [0, 200, 400, 800].map { .milliseconds($0) })
        let unbounded = ReconnectPolicy(jitter: 0, maxDelay: .seconds(Int64.max))
        #expect(unbounded.delay(server: .seconds(Int64.max / 2), attempt: 40) == .seconds(Int64.max))
    }

    @Test("jitter at maxDelay is taken off the cap: clients capped alike do not come back at the same instant")
    func jitterAtTheCap() {
        let policy = ReconnectPolicy(jitter: 0.2, maxDelay: .seconds(1))
        let delays = (0..<100).map { _ in policy.delay(server: .seconds(5)) }
        #expect(delays.allSatisfy { $0 >= .milliseconds(800) && $0 <= .seconds(1) })
        #expect(Set(delays).count > 1, "all \(delays.first.map { "\($0)" } ?? "-")")
        // A jitter of 2 takes at most half the cap off: never a reconnect at once in the middle of an outage.
        let wide = ReconnectPolicy(jitter: 2, maxDelay: .seconds(1))
        #expect((0..<100).allSatisfy { _ in wide.delay(server: .seconds(5)) >= .milliseconds(500) })
    }

    /// Answers every request with an event stream that greets (`: connected`) and ends at once.
    struct GreetAndClose: Transport {
        let sent = DecisionFixtures.Counter()

        func send(_ request: OutgoingRequest, context: TransportContext) async throws -> TransportResponse {
            _ = sent.next()
            var head = HTTPResponse(status: .ok)
            head.headerFields[.contentType] = "text/event-stream"
            return TransportResponse(head: head, body: MessageBody(Array(": connected\nretry: 0\n\n".utf8)))
        }
    }

    @Test("a stream that greets and closes at once spends the budget (it reconnected forever, with retry: 0 at once)")
    func greetingAndCloseSpendsTheBudget() async throws {
        let transport = GreetAndClose()
        let client = Client(server: Server(baseURL: URL(string: "https://api.example.com")!), transport: transport)
        let policy = ReconnectPolicy(maxReconnects: 2, defaultDelay: .zero, jitter: 0, maxDelay: .milliseconds(400))
        let error = await expectCourierError {
            for try await _ in client.events(Notifications(), reconnect: policy) {}
        }
        #expect(error?.code == .reconnectLimit)
        // 3 on an idle machine. A connection that a loaded machine keeps from its close for a second counts as lived
        // (one full run saw 5); without the rule the loop never ends, and the test hits its time limit.
        #expect((3...10).contains(transport.sent.count), "\(transport.sent.count) requests")
    }

    struct CappedNotifications: Request {
        typealias Response = LiveResponse
        var path: String { "/notifications" }
        var maxResponseBodySize: Int? { 16 }
    }

    @Test("the request's maxResponseBodySize ends the stream with bodyTooLarge, without reconnecting")
    func bodyLimitEndsTheStream() async throws {
        let mock = MockTransport()
        let text = "data: first\n\n" + String(repeating: "data: more\n\n", count: 10)
        mock.stub(.get, "/notifications", with: Self.stream(text))
        var events: [String] = []
        let error = await #expect(throws: CourierError.self) {
            for try await event in Self.client(mock).events(CappedNotifications()) { events.append(event.data) }
        }
        #expect(error?.code == .bodyTooLarge)
        #expect(mock.recordedRequests.count == 1, "a limit is not a reason to reconnect")
    }

    @Test("the events a chunk completes before it breaks a limit are delivered, then the limit's error")
    func eventsBeforeALimit() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/notifications", with: Self.stream("data: a\n\ndata: \(String(repeating: "x", count: 64))\n"))
        var events: [String] = []
        let source = Self.client(mock).events(Notifications(), limits: StreamLimits(maximumLineLength: 16))
        let error = await #expect(throws: CourierError.self) {
            for try await event in source { events.append(event.data) }
        }
        #expect(events == ["a"])
        #expect(error?.code == .lineTooLarge)
        #expect(mock.recordedRequests.count == 1, "a limit is not a reason to reconnect")
    }

    @Test("a reader that stops before the end still gets the stream's one log line, once")
    func logLineWhenTheReaderStops() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/notifications", with: Self.stream("data: a\n\ndata: b\n\n"))
        let log = DecisionFixtures.LogCapture()
        var configuration = Client.Configuration()
        configuration.logger = log.logger()
        let client = Client(
            server: Server(baseURL: URL(string: "https://api.example.com")!), transport: mock,
            configuration: configuration)
        for try await _ in client.events(Notifications()) { break }

        let lines = log.messages.filter { $0.hasPrefix("event stream Notifications ended") }
        #expect(lines.count == 1)
        #expect(lines.first?.contains("1 events, 1 connections") == true)
        #expect(lines.first?.hasSuffix("stopped by its reader") == true)
    }
}
