import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

private struct Greeting: Decodable, Sendable, Equatable {
    var hello: String
}

private struct DecodableRequest: Request {
    typealias Response = Greeting
    var path: String { "/probe" }
}

private struct DataRequest: Request {
    typealias Response = Data
    var path: String { "/probe" }
}

private struct StringRequest: Request {
    typealias Response = String
    var path: String { "/probe" }
}

private struct VoidRequest: Request {
    typealias Response = Void
    var path: String { "/probe" }
}

/// Which parser a request gets by default, and how parse failures surface.
@Suite("ResponseParser", .timeLimit(.minutes(1)))
struct ResponseParserTests {
    @Test("the default parser is chosen by the Response type")
    func defaultParserPerType() {
        #expect(DecodableRequest().parser is JSONParser<Greeting>)
        #expect(DataRequest().parser is DataParser)
        #expect(StringRequest().parser is StringParser)
        #expect(VoidRequest().parser is EmptyParser)
    }

    @Test("a Decodable response is decoded from JSON")
    func decodable() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .json(raw: #"{"hello":"world"}"#))
        #expect(try await client.send(DecodableRequest()) == Greeting(hello: "world"))
    }

    @Test("a String response is the text, not JSON-decoded, although String is Decodable")
    func stringIsText() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: [.text("hello"), .json(raw: #""quoted""#)])
        #expect(try await client.send(StringRequest()) == "hello")
        #expect(try await client.send(StringRequest()) == #""quoted""#)
    }

    @Test("a Data response is the raw bytes, not JSON-decoded base64, although Data is Decodable")
    func dataIsRaw() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .json(raw: #""aGk=""#))
        #expect(try await client.send(DataRequest()) == Data(#""aGk=""#.utf8))
    }

    @Test("a Void response ignores the body")
    func voidIgnoresBody() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .text("whatever"))
        try await client.send(VoidRequest())
        #expect(mock.recordedRequests.count == 1)
    }

    @Test("a body that is not JSON says what it is instead (a captive portal's HTML page); a JSON one does not")
    func notJSONNamesTheContentType() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(
            .get, "/probe",
            with: [
                .text("<html>Sign in to Wi-Fi</html>", headerFields: [.contentType: "text/html"]),
                .json(raw: #"{"hello": x}"#),
            ])
        let portal = try #require(await expectCourierError { try await client.send(DecodableRequest()) })
        #expect(portal.code == .decodingFailed)
        #expect(portal.message?.contains("Content-Type is text/html") == true, "\(portal)")
        let broken = try #require(await expectCourierError { try await client.send(DecodableRequest()) })
        #expect(broken.message?.contains("Content-Type") == false, "\(broken)")
    }

    @Test("a parser's own error is wrapped as decodingFailed at parse, keeping the error")
    func parserErrorIsWrapped() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .text("x"))
        let probe = Probe<Int>(parse: { _, _ in throw DecisionFixtures.Failure(reason: "unparseable") })
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect(error.code == .decodingFailed)
        #expect(error.stage == .parse)
        #expect(error.underlyingError as? DecisionFixtures.Failure == DecisionFixtures.Failure(reason: "unparseable"))
        #expect(error.trace.description == "validateStatus ✓ → parse ✗")
    }

    @Test("the parser sees the request as sent and the client's decoder")
    func parseContext() async throws {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let (client, mock) = Fixtures.client { $0.jsonDecoder = decoder }
        mock.stub(.put, "/probe", with: .text("x"))
        let probe = Probe<String>(
            method: .put,
            parse: { _, context in
                let strategy = context.jsonDecoder.keyDecodingStrategy
                let snake = if case .convertFromSnakeCase = strategy { true } else { false }
                return "\(context.request.method) \(context.request.path ?? "") snake=\(snake)"
            }
        )
        #expect(try await client.send(probe) == "PUT /probe snake=true")
    }
}
