import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("CourierError", .timeLimit(.minutes(1)))
struct CourierErrorTests {
    @Test("the description is one line naming code, stage, method, URL, status, message and trace")
    func descriptionOfStatusFailure() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: MockResponse(status: .notFound, body: Data("nope".utf8)))
        let error = try #require(await expectCourierError { try await client.send(Probe()) })
        #expect(
            error.description
                == "CourierError.unacceptableStatus at decide: GET https://api.example.com/probe → 404: "
                + "the server answered 404 Not Found [validateStatus ✗]"
        )
        #expect(String(describing: error) == error.description)
        #expect(!error.description.contains("\n"))
    }

    @Test("the description of an error without a request names code and stage only")
    func descriptionWithoutRequest() {
        #expect(CourierError(code: .timedOut, stage: .transport).description == "CourierError.timedOut at transport")
        let withMessage = CourierError(code: .invalidHeader, stage: .validate, message: "bad name")
        #expect(withMessage.description == "CourierError.invalidHeader at validate: bad name")
    }

    @Test("the description of a POST names the method and the full URL with its query")
    func descriptionOfPost() async throws {
        let (client, mock) = Fixtures.client(baseURL: URL(string: "https://api.example.com:8443/v1")!)
        mock.stub(.post, "/v1/items") { _ in .status(500) }
        var probe = Probe(method: .post, path: "/items")
        probe.query = ["page": 2]
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect(
            error.description.hasPrefix(
                "CourierError.unacceptableStatus at decide: POST https://api.example.com:8443/v1/items?page=2 → 500"))
    }

    @Test(
        "codes are equal to themselves only, and describe themselves by name",
        arguments: [
            (CourierError.Code.invalidURL, "invalidURL"), (.invalidHeader, "invalidHeader"),
            (.invalidBody, "invalidBody"), (.encodingFailed, "encodingFailed"),
            (.missingCredential, "missingCredential"), (.bodyNotReplayable, "bodyNotReplayable"),
            (.transportFailed, "transportFailed"), (.connectionFailed, "connectionFailed"), (.timedOut, "timedOut"),
            (.bodyTooLarge, "bodyTooLarge"), (.unacceptableStatus, "unacceptableStatus"),
            (.decodingFailed, "decodingFailed"), (.tooManyRestarts, "tooManyRestarts"),
            (.decisionFailed, "decisionFailed"), (.adapterFailed, "adapterFailed"),
            (.unexpectedResponse, "unexpectedResponse"),
        ]
    )
    func codeEquality(code: CourierError.Code, name: String) {
        #expect(code == code)
        #expect(code.description == name)
        let others: [CourierError.Code] = [.invalidURL, .bodyTooLarge, .timedOut, .unexpectedResponse]
        for other in others where other.description != name {
            #expect(code != other)
        }
        #expect(Set([code, code]).count == 1)
    }

    @Test("an unknown transport error is wrapped as transportFailed, keeping it as underlyingError")
    func unknownTransportErrorIsWrapped() async throws {
        let (client, mock) = Fixtures.client()
        let cause = DecisionFixtures.Failure(reason: "socket exploded")
        mock.stub(.get, "/probe", with: .status(200, fault: .failBeforeResponse(cause)))
        let error = try #require(await expectCourierError { try await client.send(Probe()) })
        #expect(error.code == .transportFailed)
        #expect(error.stage == .transport)
        #expect(error.underlyingError as? DecisionFixtures.Failure == cause)
        #expect(error.response == nil)
        #expect(error.request?.path == "/probe")
        #expect(error.description.contains("(underlying: Failure(socket exploded))"))
        #expect(
            error.description.hasPrefix("CourierError.transportFailed at transport: GET https://api.example.com/probe"))
    }

    @Test("a CourierError thrown by a transport keeps its code and is not nested")
    func courierErrorFromTransport() async throws {
        let (client, mock) = Fixtures.client()
        let refused = CourierError(code: .connectionFailed, stage: .transport, message: "connection refused")
        mock.stub(.get, "/probe", with: .status(200, fault: .failBeforeResponse(refused)))
        let error = try #require(await expectCourierError { try await client.send(Probe()) })
        #expect(error.code == .connectionFailed)
        #expect(error.message == "connection refused")
        #expect(error.underlyingError == nil)
        #expect(error.request?.method == .get)
        #expect(!error.description.contains("underlying"))
    }

    @Test("an underlying error with a multi-line description still gives a one-line description")
    func multiLineUnderlyingError() async throws {
        let (client, mock) = Fixtures.client()
        let cause = DecisionFixtures.Failure(reason: "first line\nsecond line")
        mock.stub(.get, "/probe", with: .status(200, fault: .failBeforeResponse(cause)))
        let error = try #require(await expectCourierError { try await client.send(Probe()) })
        #expect(error.code == .transportFailed)
        #expect(!error.description.contains("\n"))
    }

    @Test("stages describe themselves by name")
    func stageNames() {
        let stages: [CourierError.Stage] = [.resolve, .adapt, .validate, .cache, .transport, .decide, .parse]
        #expect(stages.map(\.description) == ["resolve", "adapt", "validate", "cache", "transport", "decide", "parse"])
    }

    @Test("an error before any decision ran has no empty trace brackets in its description")
    func noEmptyTraceBrackets() async throws {
        let (client, _) = Fixtures.client()
        var probe = Probe()
        probe.extraAdapters = [.custom("explode") { _, _ in throw DecisionFixtures.Failure(reason: "boom") }]
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect(error.code == .adapterFailed)
        #expect(error.trace.description.isEmpty)
        #expect(!error.description.hasSuffix("[]"))
    }
}
