import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

private struct Account: Decodable, Sendable, Equatable {
    var userName: String
}

private struct Envelope: Decodable, Sendable {
    struct User: Decodable, Sendable { var id: Int }
    var user: User
}

private struct Listing: Decodable, Sendable {
    struct Item: Decodable, Sendable { var id: Int }
    var items: [Item]
}

/// A request that decodes with its own decoder, the way a request overrides `parser`.
private struct SnakeCaseRequest: Request {
    typealias Response = Account
    var path: String { "/account" }
    var parser: any ResponseParser<Account> {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return JSONParser(decoder: decoder)
    }
}

@Suite("JSONParser", .timeLimit(.minutes(1)))
struct JSONParserTests {
    private static func parse<Value: Decodable & Sendable>(
        _ body: String,
        as type: Value.Type,
        decoder: JSONDecoder? = nil,
        clientDecoder: JSONDecoder = JSONDecoder()
    ) throws -> Value {
        let context = ParseContext(
            request: HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/p"),
            jsonDecoder: clientDecoder
        )
        return try JSONParser<Value>(decoder: decoder).parse(
            DecisionFixtures.received(200, body: body), context: context)
    }

    private static var snakeCase: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }

    @Test("without its own decoder the parser uses the client's")
    func usesClientDecoder() async throws {
        let (client, mock) = Fixtures.client { $0.jsonDecoder = Self.snakeCase }
        mock.stub(.get, "/probe", with: .json(raw: #"{"user_name":"ada"}"#))
        #expect(try await client.send(DecisionFixtures.jsonProbe(Account.self)) == Account(userName: "ada"))
    }

    @Test("a per-request decoder wins over the client's")
    func perRequestDecoder() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/account", with: .json(raw: #"{"user_name":"ada"}"#))
        #expect(try await client.send(SnakeCaseRequest()) == Account(userName: "ada"))

        let clientDefault = try? Self.parse(#"{"user_name":"ada"}"#, as: Account.self)
        #expect(clientDefault == nil)
        let perRequest = try Self.parse(
            #"{"user_name":"ada"}"#,
            as: Account.self,
            decoder: Self.snakeCase,
            clientDecoder: JSONDecoder()
        )
        #expect(perRequest == Account(userName: "ada"))
    }

    @Test("an empty body fails with decodingFailed at parse, with a clear message")
    func emptyBody() throws {
        let error = try #require(throws: CourierError.self) { try Self.parse("", as: Account.self) }
        #expect(error.code == .decodingFailed)
        #expect(error.stage == .parse)
        #expect(error.message == "the body is empty, expected JSON for Account")
    }

    @Test("an empty body is nil for an optional response (a 204 to `Account?`); a JSON null too; a body still decodes")
    func emptyBodyOptional() async throws {
        #expect(try Self.parse("", as: Account?.self) == nil)
        #expect(try Self.parse("null", as: Account?.self) == nil)
        #expect(try Self.parse(#"{"userName":"ada"}"#, as: Account?.self) == Account(userName: "ada"))
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .status(204))
        let value = try await client.send(DecisionFixtures.jsonProbe(Account?.self))
        #expect(value == nil)
        #expect(mock.recordedRequests.count == 1)
    }

    @Test("an empty body through the client reports the request, the trace and the parse stage")
    func emptyBodyThroughClient() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .status(200))
        let error = try #require(
            await expectCourierError { try await client.send(DecisionFixtures.jsonProbe(Account.self)) })
        #expect(error.code == .decodingFailed)
        #expect(error.stage == .parse)
        #expect(error.request?.path == "/probe")
        #expect(error.response?.status.code == 200)
        #expect(error.trace.description == "validateStatus ✓ → parse ✗")
        #expect(error.description.contains("the body is empty"))
    }

    @Test("a type mismatch names the coding path and keeps the DecodingError")
    func typeMismatchNamesPath() throws {
        let error = try #require(throws: CourierError.self) {
            try Self.parse(#"{"user":{"id":"forty-two"}}"#, as: Envelope.self)
        }
        #expect(error.code == .decodingFailed)
        let message = try #require(error.message)
        #expect(message.hasPrefix("could not decode Envelope: expected Int at user.id"))
        guard case .typeMismatch = try #require(error.underlyingError as? DecodingError) else {
            Issue.record("expected a typeMismatch, got \(String(describing: error.underlyingError))")
            return
        }
    }

    @Test("a path through an array names the index")
    func arrayIndexInPath() throws {
        let error = try #require(throws: CourierError.self) {
            try Self.parse(#"{"items":[{"id":1},{"id":"two"}]}"#, as: Listing.self)
        }
        #expect(error.message?.contains("items[1].id") == true)
    }

    @Test("a missing key and a null are named too")
    func missingKeyAndNull() throws {
        let missing = try #require(throws: CourierError.self) { try Self.parse(#"{"user":{}}"#, as: Envelope.self) }
        #expect(missing.message?.contains("key 'id' not found at user") == true)
        let null = try #require(throws: CourierError.self) { try Self.parse(#"{"user":null}"#, as: Envelope.self) }
        #expect(null.message?.contains("but found null at user") == true)
    }

    @Test("malformed JSON fails with decodingFailed and an underlying DecodingError")
    func malformedJSON() throws {
        let error = try #require(throws: CourierError.self) { try Self.parse("{\"user\":", as: Envelope.self) }
        #expect(error.code == .decodingFailed)
        #expect(error.underlyingError is DecodingError)
        #expect(error.message?.hasPrefix("could not decode Envelope: invalid data") == true)
    }

    @Test("valid JSON decodes, with the default decoder")
    func decodes() throws {
        let envelope = try Self.parse(#"{"user":{"id":42}}"#, as: Envelope.self)
        #expect(envelope.user.id == 42)
        #expect(JSONParser<Envelope>().decoder == nil)
    }
}
