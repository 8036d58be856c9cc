import CourierTesting
import Foundation
import HTTPTypes
import Testing

@testable import CourierCore

@Suite("README: streaming responses")
struct ReadmeStreamingSampleTests {
    struct Delta: Decodable, Sendable {
        let text: String
    }

    struct Completion: Request {
        typealias Response = LiveResponse
        var method: HTTPRequest.Method { .post }
        var path: String { "/v1/completions" }
        var body: RequestBody? { .json(["prompt": prompt]) }
        let prompt: String
    }

    struct Notifications: Request {
        typealias Response = LiveResponse
        var path: String { "/notifications" }
    }

    func streamingSample(client: Client) async throws -> (String, [String]) {
        var shown: [String] = []
        func show(_ text: String) { shown.append(text) }
        var answer = ""
        // readme-streaming:begin
        let live = try await client.send(Completion(prompt: "Hello"))  // returns at the head, 401/503 handled
        for try await delta in live.serverSentEvents(of: Delta.self, terminator: "[DONE]") {
            answer += delta.data.text  // each event as soon as the server flushes it
        }
        for try await event in client.events(Notifications()) {  // reconnects with Last-Event-ID, stops on 204
            show(event.data)
        }
        // readme-streaming:end
        return (answer, shown)
    }

    @Test("the README's streaming sample compiles, matches, and reads the events")
    func streamingSampleRuns() async throws {
        let mock = MockTransport()
        let stream = "data: {\"text\":\"Hel\"}\n\ndata: {\"text\":\"lo\"}\n\ndata: [DONE]\n\n"
        mock.stub(.post, "/v1/completions", with: .text(stream, headerFields: [.contentType: "text/event-stream"]))
        mock.stub(
            .get, "/notifications",
            with: [
                // `retry: 1`: the reconnect comes after 1 ms, not the default 3 s.
                .text("retry: 1\nid: 1\ndata: one\n\n", headerFields: [.contentType: "text/event-stream"]),
                .status(204),
            ])
        let client = Client(server: Server(baseURL: URL(string: "https://api.example.com")!), transport: mock)
        let (answer, shown) = try await streamingSample(client: client)
        #expect(answer == "Hello")
        #expect(shown == ["one"])
        let resumed = try #require(mock.recordedRequests.last)
        #expect(resumed.head.headerFields[HTTPField.Name("Last-Event-ID")!] == "1")

        let (readmeLines, sourceLines) = try ReadmeSampleTests.readmeAndSource(marker: "streaming", testFile: #filePath)
        #expect(readmeLines == sourceLines)
    }
}
