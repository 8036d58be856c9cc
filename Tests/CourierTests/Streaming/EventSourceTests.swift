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

    @Test("after a reconnect, an event without an id field is delivered: it carries the stream's last ID, and is new")
    func eventsWithoutAnIDAfterAReconnect() async throws {
        let mock = MockTransport()
        mock.stub(
            .get, "/notifications",
            with: [
                Self.stream("retry: 1\nid: 1\ndata: a\n\n"),
                // A replay of `a` (its own id), then events that name no ID: they inherit "1".
                Self.stream("id: 1\ndata: a\n\ndata: b\n\ndata: c\n\n"),
                .status(204),
            ])
        var events: [ServerSentEvent] = []
        for try await event in Self.client(mock).events(Notifications(), reconnect: ReconnectPolicy(maxReconnects: 1)) {
            events.append(event)
        }
        #expect(events.map(\.data) == ["a", "b", "c"])
        #expect(events.map(\.id) == ["1", "1", "1"])
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
