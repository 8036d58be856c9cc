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
