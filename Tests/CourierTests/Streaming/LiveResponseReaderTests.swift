import CourierTesting
import Foundation
import HTTPTypes
import Testing

@testable import CourierCore

@Suite("LiveResponse: one reader", .timeLimit(.minutes(1)))
struct LiveResponseReaderTests {
    struct Live: Request {
        typealias Response = LiveResponse
        var path: String { "/live" }
    }

    @Test("a second iterator fails with bodyNotReplayable and does not end the call the first one is reading")
    func secondIteratorDoesNotEndTheCall() async throws {
        let activity = ActivityTracker()
        let transport = DecisionFixtures.ChunkedTransport(chunks: [[1, 2], [3], [4, 5, 6]])
        let client = Client(
            server: Server(baseURL: URL(string: "https://api.example.com")!), transport: transport,
            configuration: Client.Configuration(activity: activity))
        let live = try await client.send(Live())

        var first = live.makeAsyncIterator()
        #expect(try await first.next() == [1, 2])
        var second = live.makeAsyncIterator()
        let error = await #expect(throws: CourierError.self) { _ = try await second.next() }
        #expect(error?.code == .bodyNotReplayable)
        #expect(activity.inFlight == 1, "the call is still open: its body is being read")

        var rest: [UInt8] = []
        while let chunk = try await first.next() { rest += chunk }
        #expect(rest == [3, 4, 5, 6])
        #expect(activity.inFlight == 0)
    }
}
