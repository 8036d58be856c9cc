import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// A request whose `Response` is `Data`, with the default parser.
private struct Download: Request {
    typealias Response = Data
    var path: String { "/download" }
}

@Suite("DataParser", .timeLimit(.minutes(1)))
struct DataParserTests {
    private static let context = ParseContext(
        request: HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/p")
    )

    @Test(
        "returns the body's bytes exactly as they arrived",
        arguments: [[], [0x00], [0xFF, 0xFE, 0xC3, 0x28], Array("{\"json\":true}".utf8)] as [[UInt8]]
    )
    func returnsBytes(bytes: [UInt8]) throws {
        let response = ReceivedResponse(head: HTTPResponse(status: .ok), body: Data(bytes))
        #expect(try DataParser().parse(response, context: Self.context) == Data(bytes))
    }

    @Test("a Data request returns binary bodies untouched, even when they are not text or JSON")
    func throughClient() async throws {
        let (client, mock) = Fixtures.client()
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0xFF]
        mock.stub(.get, "/download", with: .data(Data(png), headerFields: [.contentType: "image/png"]))
        #expect(try await client.send(Download()) == Data(png))
    }

    @Test("a Data request still validates the status first")
    func validatesStatus() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/download", with: .text("missing", status: 404))
        let error = try #require(await expectCourierError { try await client.send(Download()) })
        #expect(error.code == .unacceptableStatus)
    }
}
