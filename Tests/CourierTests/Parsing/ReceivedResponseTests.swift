import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// Reading a response body into a ``ReceivedResponse``: the size limit and faults mid-body.
@Suite("ReceivedResponse", .timeLimit(.minutes(1)))
struct ReceivedResponseTests {
    /// A probe that returns how many body bytes reached the parser.
    private static func sizeProbe(method: HTTPRequest.Method = .get, limit: Int? = nil) -> Probe<Int> {
        Probe(method: method, maxResponseBodySize: limit, parse: { response, _ in response.body.count })
    }

    private static func body(_ count: Int) -> Data { Data(repeating: UInt8(ascii: "a"), count: count) }

    @Test("the default limit is 10 MiB: exactly 10 MiB is read, one byte more is refused")
    func defaultLimit() async throws {
        #expect(Client.Configuration.defaultMaxResponseBodySize == 10 * 1024 * 1024)
        #expect(Client.Configuration().maxResponseBodySize == 10 * 1024 * 1024)
        let (client, mock) = Fixtures.client()
        let limit = 10 * 1024 * 1024
        mock.stub(.get, "/probe", with: [.data(Self.body(limit)), .data(Self.body(limit + 1))])
        #expect(try await client.send(Self.sizeProbe()) == limit)
        let error = try #require(await expectCourierError { try await client.send(Self.sizeProbe()) })
        #expect(error.code == .bodyTooLarge)
    }

    @Test("the client's limit applies to every request")
    func clientLimit() async throws {
        let (client, mock) = Fixtures.client { $0.maxResponseBodySize = 100 }
        mock.stub(
            .get, "/probe",
            with: [
                .data(Self.body(100)), .data(Self.body(101), headerFields: [.contentLength: "101"]),
                .data(Self.body(101)),
            ])
        #expect(try await client.send(Self.sizeProbe()) == 100)
        let error = try #require(await expectCourierError { try await client.send(Self.sizeProbe()) })
        #expect(error.code == .bodyTooLarge)
        #expect(error.stage == .transport)
        #expect(error.response?.status.code == 200)
        #expect(error.message == "the body announces 101 bytes; at most 100 bytes are read into memory")
        // Without a Content-Length, the limit is found while reading.
        let grown = try #require(await expectCourierError { try await client.send(Self.sizeProbe()) })
        #expect(grown.code == .bodyTooLarge)
        #expect(grown.message == "the body grew past the limit; at most 100 bytes are read into memory")
        #expect(error.request?.path == "/probe")
    }

    @Test("a request's limit overrides the client's, in both directions")
    func requestLimit() async throws {
        let (client, mock) = Fixtures.client { $0.maxResponseBodySize = 100 }
        mock.stub(.get, "/probe", with: [.data(Self.body(500)), .data(Self.body(11))])
        #expect(try await client.send(Self.sizeProbe(limit: 1000)) == 500)
        let error = try #require(await expectCourierError { try await client.send(Self.sizeProbe(limit: 10)) })
        #expect(error.code == .bodyTooLarge)
        #expect(error.message?.contains("at most 10 bytes") == true)
    }

    @Test("a body sent in chunks over the limit is refused")
    func chunkedMockBody() async throws {
        let (client, mock) = Fixtures.client { $0.maxResponseBodySize = 64 }
        mock.stub(.get, "/probe", with: MockResponse(body: Self.body(1000), chunkSize: 16))
        let error = try #require(await expectCourierError { try await client.send(Self.sizeProbe()) })
        #expect(error.code == .bodyTooLarge)
    }

    @Test("a chunked body of unknown length is cut off once it grows past the limit, without reading the rest")
    func unknownLengthBody() async throws {
        let chunks = Array(repeating: Array(repeating: UInt8(ascii: "a"), count: 10), count: 100)
        let transport = DecisionFixtures.ChunkedTransport(chunks: chunks)
        var configuration = Client.Configuration()
        configuration.maxResponseBodySize = 25
        let client = Client(server: Fixtures.server, transport: transport, configuration: configuration)
        let error = try #require(await expectCourierError { try await client.send(Self.sizeProbe()) })
        #expect(error.code == .bodyTooLarge)
        #expect(error.message == "the body grew past the limit; at most 25 bytes are read into memory")
        #expect(transport.pulled.count == 3)
    }

    @Test("a chunked body of unknown length within the limit is read whole")
    func unknownLengthWithinLimit() async throws {
        let chunks = Array(repeating: Array(repeating: UInt8(ascii: "a"), count: 10), count: 5)
        let transport = DecisionFixtures.ChunkedTransport(chunks: chunks)
        let client = Client(server: Fixtures.server, transport: transport)
        #expect(try await client.send(Self.sizeProbe(limit: 50)) == 50)
    }

    @Test("a HEAD response's announced body is not read, so its size does not matter")
    func headIgnoresBody() async throws {
        let (client, mock) = Fixtures.client { $0.maxResponseBodySize = 10 }
        mock.stub(.head, "/probe", with: .data(Self.body(1024 * 1024)))
        #expect(try await client.send(Self.sizeProbe(method: .head)) == 0)
    }

    @Test("204 and 304 responses have no body to read", arguments: [204, 304])
    func noBodyStatuses(code: Int) async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .data(Self.body(5), status: code))
        let probe = Probe<Int>(decisionList: [], parse: { response, _ in response.body.count })
        #expect(try await client.send(probe) == 0)
    }

    @Test("a connection reset mid-body fails with truncatedResponse; the partial body is never a success")
    func resetMidBody() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .text("0123456789", fault: .resetMidBody(afterBytes: 4)))
        let received = DecisionFixtures.Journal()
        var probe = Probe<String>(parse: { response, _ in
            let text = String(decoding: response.body, as: UTF8.self)
            received.record(text)
            return text
        })
        probe.decisionList = [.validateStatus()]
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect(error.code == .truncatedResponse)
        #expect(error.stage == .transport)
        #expect(error.response?.status.code == 200)
        #expect(received.entries.isEmpty)
        #expect(error.bodyExcerpt == nil)
        #expect(error.message?.contains("after 4 body bytes") == true)
    }

    @Test("a reset before the first body byte fails the same way")
    func resetBeforeBody() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .text("0123456789", fault: .resetMidBody(afterBytes: 0)))
        let error = try #require(await expectCourierError { try await client.send(Probe()) })
        #expect(error.code == .truncatedResponse)
    }
}
