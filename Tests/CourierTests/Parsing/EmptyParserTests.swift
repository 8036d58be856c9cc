import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// A request whose `Response` is `Void`, with the default parser.
private struct Ping: Request {
    typealias Response = Void
    var method: HTTPRequest.Method { .post }
    var path: String { "/ping" }
}

@Suite("EmptyParser", .timeLimit(.minutes(1)))
struct EmptyParserTests {
    @Test("ignores any body", arguments: ["", "{}", "not json at all", "\u{FFFD}"])
    func ignoresBody(body: String) throws {
        let context = ParseContext(
            request: HTTPRequest(method: .post, scheme: "https", authority: "api.example.com", path: "/p")
        )
        #expect(throws: Never.self) {
            try EmptyParser().parse(DecisionFixtures.received(200, body: body), context: context)
        }
    }

    @Test("a Void request succeeds on 204 and on a 200 with a body it ignores", arguments: [204, 200])
    func voidRequestSucceeds(code: Int) async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.post, "/ping", with: code == 204 ? .status(204) : .text("ignored", status: code))
        try await client.send(Ping())
        #expect(mock.recordedRequests.count == 1)
        #expect(mock.recordedRequests.first?.head.method == .post)
    }

    @Test("a Void request still fails on an unacceptable status")
    func voidRequestValidatesStatus() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.post, "/ping", with: .text("down", status: 503))
        let error = try #require(await expectCourierError { try await client.send(Ping()) })
        #expect(error.code == .unacceptableStatus)
        #expect(error.bodyExcerpt == "down")
    }
}
