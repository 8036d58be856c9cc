import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("ValidateStatusDecision", .timeLimit(.minutes(1)))
struct ValidateStatusDecisionTests {
    @Test("2xx statuses pass with the response unchanged", arguments: [200, 201, 202, 204, 206, 299])
    func successfulStatusesPass(code: Int) async throws {
        let decision = ValidateStatusDecision()
        let response = DecisionFixtures.received(code, body: "payload")
        let action = try await decision.decide(response, context: DecisionFixtures.context())
        #expect(action.caseName == "continue")
        #expect(action.response?.status.code == code)
        #expect(action.response?.body == Data("payload".utf8))
        #expect(decision.name == "validateStatus")
    }

    @Test("a decision that changes a response's head changes its status: the status read once follows the head")
    func statusFollowsTheHead() async throws {
        var response = DecisionFixtures.received(200, body: "payload")
        response.head.status = .serviceUnavailable
        #expect(response.status == .serviceUnavailable)
        response.head = HTTPResponse(status: .init(code: 404, reasonPhrase: "Gone Fishing"))
        #expect(response.status.code == 404)
        #expect(response.status.reasonPhrase == "Gone Fishing")
        // A decision later in the chain judges the new status, not the one the transport delivered.
        let action = try await ValidateStatusDecision().decide(response, context: DecisionFixtures.context())
        #expect(action.caseName == "fail")
    }

    @Test("a 2xx through the client returns the parsed body")
    func successThroughClient() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .text("fine", status: 201))
        #expect(try await client.send(DecisionFixtures.textProbe()) == "fine")
    }

    @Test(
        "a non-2xx status fails with unacceptableStatus at decide, with response, excerpt and trace",
        arguments: [301, 400, 401, 403, 404, 418, 500, 503]
    )
    func unacceptableStatusFails(code: Int) async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .text("status \(code) body", status: code))
        let error = try #require(await expectCourierError { try await client.send(DecisionFixtures.textProbe()) })
        #expect(error.code == .unacceptableStatus)
        #expect(error.stage == .decide)
        #expect(error.response?.status.code == code)
        #expect(error.bodyExcerpt == "status \(code) body")
        #expect(error.trace.decisionNames == ["validateStatus"])
        #expect(error.trace.description == "validateStatus ✗")
        #expect(error.request?.method == .get)
        #expect(error.request?.path == "/probe")
        #expect(error.message?.contains("\(code)") == true)
        #expect(error.underlyingError == nil)
        #expect(mock.recordedRequests.count == 1)
    }

    @Test("the seeds' 403 body is decoded into a typed APIError as underlyingError")
    func decodesAPIError() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .json(raw: #"{"code":403,"reason":"Invalid Token."}"#, status: 403))
        let probe = DecisionFixtures.textProbe(decisions: [.validateStatus(decoding: APIError.self)])
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect(error.code == .unacceptableStatus)
        let apiError = try #require(error.underlyingError as? APIError)
        #expect(apiError == APIError(code: 403, reason: "Invalid Token."))
        #expect(error.bodyExcerpt == #"{"code":403,"reason":"Invalid Token."}"#)
    }

    @Test(
        "a body that does not decode as APIError leaves underlyingError nil",
        arguments: [#"{"error":"nope"}"#, "<html>Forbidden</html>", #"{"code":"403","reason":1}"#, ""]
    )
    func nonMatchingBodyHasNoUnderlyingError(body: String) async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .text(body, status: 403))
        let probe = DecisionFixtures.textProbe(decisions: [.validateStatus(decoding: APIError.self)])
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect(error.code == .unacceptableStatus)
        #expect(error.underlyingError == nil)
        #expect(error.response?.status.code == 403)
        // The message says why the body is not the API's error (not for an empty body, which has nothing to say).
        #expect(error.message?.contains("does not decode as APIError") == !body.isEmpty, "\(error.message ?? "")")
    }

    @Test("a body that does not decode as APIError names the missing key in the message")
    func undecodedAPIErrorIsExplained() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .json(raw: #"{"code":422,"message":"x"}"#, status: 422))
        let probe = DecisionFixtures.textProbe(decisions: [.validateStatus(decoding: APIError.self)])
        let error = try #require(await expectCourierError { try await client.send(probe) })
        let message = error.message ?? ""
        #expect(message.hasPrefix("the server answered 422"), "\(message)")
        #expect(message.contains("APIError") && message.contains("'reason'"), "\(message)")
    }

    @Test("the error body is decoded with the client's JSON decoder")
    func usesClientDecoder() async throws {
        struct SnakeError: Decodable, Error { let errorCode: Int }
        let (client, mock) = Fixtures.client {
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            $0.jsonDecoder = decoder
        }
        mock.stub(.get, "/probe", with: .json(raw: #"{"error_code":42}"#, status: 422))
        let probe = DecisionFixtures.textProbe(decisions: [.validateStatus(decoding: SnakeError.self)])
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect((error.underlyingError as? SnakeError)?.errorCode == 42)
    }

    @Test("a custom acceptable set lets 404 through and rejects 201")
    func customAcceptable() async throws {
        let (client, mock) = Fixtures.client()
        let onlyOKOrNotFound: @Sendable (HTTPResponse.Status) -> Bool = { $0.code == 200 || $0.code == 404 }
        mock.stub(.get, "/missing", with: .text("no such thing", status: 404))
        mock.stub(.get, "/created", with: .text("made", status: 201))

        let missing = DecisionFixtures.textProbe(
            path: "/missing", decisions: [.validateStatus(acceptable: onlyOKOrNotFound)])
        #expect(try await client.send(missing) == "no such thing")

        let created = DecisionFixtures.textProbe(
            path: "/created", decisions: [.validateStatus(acceptable: onlyOKOrNotFound)])
        let error = try #require(await expectCourierError { try await client.send(created) })
        #expect(error.code == .unacceptableStatus)
        #expect(error.response?.status.code == 201)
    }

    @Test("a custom acceptable set also applies with a typed API error")
    func customAcceptableWithAPIError() async throws {
        let decision = ValidateStatusDecision(decoding: APIError.self, acceptable: { $0.code == 304 })
        let passed = try await decision.decide(DecisionFixtures.received(304), context: DecisionFixtures.context())
        #expect(passed.caseName == "continue")
        let failed = try await decision.decide(
            DecisionFixtures.received(200, body: #"{"code":1,"reason":"not 304"}"#),
            context: DecisionFixtures.context()
        )
        let error = try #require(failed.failure as? CourierError)
        #expect(error.code == .unacceptableStatus)
        #expect((error.underlyingError as? APIError)?.reason == "not 304")
    }

    @Test("called directly, a 500 fails with the response head and the status line in the message")
    func directFailure() async throws {
        let decision = ValidateStatusDecision()
        let action = try await decision.decide(
            ReceivedResponse(head: HTTPResponse(status: .internalServerError), body: Data("oops".utf8)),
            context: DecisionFixtures.context()
        )
        let error = try #require(action.failure as? CourierError)
        #expect(error.code == .unacceptableStatus)
        #expect(error.stage == .decide)
        #expect(error.response?.status == .internalServerError)
        #expect(error.message == "the server answered 500 Internal Server Error")
    }

    @Test(
        "a status without a reason phrase (URLSession never has one) still gives a clean message",
        arguments: [(404, "Not Found"), (503, "Service Unavailable")]
    )
    func statusWithoutReasonPhrase(code: Int, phrase: String) async throws {
        let action = try await ValidateStatusDecision().decide(
            DecisionFixtures.received(code),
            context: DecisionFixtures.context()
        )
        let message = try #require((action.failure as? CourierError)?.message)
        #expect(message == "the server answered \(code) \(phrase)")
    }
}
