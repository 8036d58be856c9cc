import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("MockTransport", .timeLimit(.minutes(1)))
struct MockTransportTests {
    /// Sends `method path` straight to `mock`, bypassing the client.
    private static func send(
        _ mock: MockTransport,
        _ path: String,
        method: HTTPRequest.Method = .get,
        body: String? = nil,
        attempt: Int = 1
    ) async throws -> (status: Int, text: String) {
        let head = HTTPRequest(method: method, scheme: "https", authority: "api.example.com", path: path)
        let request = OutgoingRequest(head: head, body: body.map { MessageBody(Data($0.utf8)) })
        let response = try await mock.send(request, context: TransportContext(attempt: attempt))
        let bytes = try await response.body.collect(upTo: .max)
        return (response.head.status.code, String(decoding: bytes, as: UTF8.self))
    }

    @Test("an unstubbed request fails loudly with unexpectedResponse, naming the request")
    func unstubbedFailsLoudly() async throws {
        let (client, mock) = Fixtures.client()
        let error = try #require(await expectCourierError { try await client.send(Probe(path: "/nothing")) })
        #expect(error.code == .unexpectedResponse)
        #expect(error.stage == .transport)
        let message = try #require(error.message)
        #expect(message.contains("MockTransport has no stub for this request"))
        #expect(message.contains("https://api.example.com/nothing"))
        #expect(error.description.contains("GET https://api.example.com/nothing"))
        #expect(mock.recordedRequests.count == 1)
    }

    @Test(
        "the no-stub message names the method and path, secrets redacted",
        arguments: [HTTPRequest.Method.post, .put, .delete])
    func unstubbedMessageNamesMethod(method: HTTPRequest.Method) async throws {
        let (client, _) = Fixtures.client { $0.adapters = [.bearer { "mock-secret" }] }
        var probe = Probe(method: method, path: "/nothing")
        probe.query = ["q": "1"]
        let error = try #require(await expectCourierError { try await client.send(probe) })
        let message = try #require(error.message)
        #expect(message.contains("-X \(method.rawValue)"))
        #expect(message.contains("/nothing?q=1"))
        #expect(!message.contains("mock-secret"))
        #expect(message.contains("Authorization: <redacted>"))
    }

    @Test("a list of responses is consumed in order, then the route stops matching")
    func sequenceThenUnmatched() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/seq", with: [.text("one"), .text("two", status: 201)])
        #expect(try await Self.send(mock, "/seq") == (200, "one"))
        #expect(try await Self.send(mock, "/seq") == (201, "two"))
        let error = try #require(await expectCourierError { try await Self.send(mock, "/seq") })
        #expect(error.code == .unexpectedResponse)
        #expect(mock.recordedRequests.count == 3)
    }

    @Test("a handler route answers every time and sees the recorded request")
    func handlerAnswersEveryTime() async throws {
        let mock = MockTransport()
        mock.stub(.post, "/echo") { recorded in .text("\(recorded.attempt):\(recorded.bodyText ?? "-")") }
        for index in 1...5 {
            #expect(
                try await Self.send(mock, "/echo", method: .post, body: "b\(index)", attempt: index).text
                    == "\(index):b\(index)")
        }
        #expect(mock.recordedRequests.count == 5)
    }

    @Test("routes are method-specific; a nil method matches any method")
    func methodSpecificRoutes() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/r", handler: { _ in .text("get") })
        mock.stub(.post, "/r", handler: { _ in .text("post") })
        mock.stub(nil, "/any", handler: { _ in .text("any") })
        #expect(try await Self.send(mock, "/r", method: .get).text == "get")
        #expect(try await Self.send(mock, "/r", method: .post).text == "post")
        #expect(try await Self.send(mock, "/any", method: .patch).text == "any")
        #expect(try await Self.send(mock, "/any", method: .delete).text == "any")
        let error = try #require(await expectCourierError { try await Self.send(mock, "/r", method: .delete) })
        #expect(error.code == .unexpectedResponse)
    }

    @Test("routes are tried in the order they were added; an exhausted one gives way to the next")
    func routeOrder() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/o", with: .text("first"))
        mock.stub(.get, "/o", handler: { _ in .text("fallback") })
        #expect(try await Self.send(mock, "/o").text == "first")
        #expect(try await Self.send(mock, "/o").text == "fallback")
        #expect(try await Self.send(mock, "/o").text == "fallback")
    }

    @Test("a path stub matches with or without the query; a stub with a query matches only that query")
    func pathMatching() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/search", handler: { recorded in .text(recorded.query ?? "none") })
        mock.stub(.get, "/exact?q=x", handler: { _ in .text("exact") })
        #expect(try await Self.send(mock, "/search?q=swift").text == "q=swift")
        #expect(try await Self.send(mock, "/search").text == "none")
        #expect(try await Self.send(mock, "/exact?q=x").text == "exact")
        let error = try #require(await expectCourierError { try await Self.send(mock, "/exact?q=y") })
        #expect(error.code == .unexpectedResponse)
    }

    @Test("enqueued responses answer unmatched requests in order; routes come first")
    func enqueueOrder() async throws {
        let mock = MockTransport()
        mock.enqueue(.text("a"))
        mock.enqueue(.text("b"))
        mock.enqueue(.text("c"))
        mock.stub(.get, "/routed", handler: { _ in .text("route") })
        #expect(try await Self.send(mock, "/x").text == "a")
        #expect(try await Self.send(mock, "/routed").text == "route")
        #expect(try await Self.send(mock, "/y").text == "b")
        #expect(try await Self.send(mock, "/z", method: .post).text == "c")
        let error = try #require(await expectCourierError { try await Self.send(mock, "/w") })
        #expect(error.code == .unexpectedResponse)
    }

    @Test("recorded requests carry the head as sent, the body and the attempt")
    func recordedRequests() async throws {
        let (client, mock) = Fixtures.client { $0.adapters = [.bearer { "visible-to-tests" }] }
        mock.stub(.post, "/items", with: [.status(503), .text("ok")])
        var probe = DecisionFixtures.textProbe(
            method: .post, path: "/items", decisions: [.retry(1, when: { _, _ in true })])
        probe.body = .text("payload")
        probe.query = ["a": 1]
        #expect(try await client.send(probe) == "ok")
        let recorded = mock.recordedRequests
        #expect(recorded.map(\.attempt) == [1, 2])
        #expect(recorded.map(\.bodyText) == ["payload", "payload"])
        #expect(recorded.map(\.body) == [Data("payload".utf8), Data("payload".utf8)])
        #expect(recorded[0].head.headerFields[.authorization] == "Bearer visible-to-tests")
        #expect(recorded[0].pathWithoutQuery == "/items")
        #expect(recorded[0].query == "a=1")
        #expect(recorded[0].head.headerFields[.contentLength] == "7")
    }

    @Test("a request without a body is recorded with a nil body")
    func recordedWithoutBody() async throws {
        let mock = MockTransport()
        mock.enqueue(.text("x"))
        _ = try await Self.send(mock, "/nobody")
        #expect(mock.recordedRequests.first?.body == nil)
        #expect(mock.recordedRequests.first?.bodyText == nil)
        #expect(mock.recordedRequests.first?.query == nil)
    }

    @Test(".failBeforeResponse throws the error before any response, after recording the request")
    func failBeforeResponse() async throws {
        let mock = MockTransport()
        let cause = DecisionFixtures.Failure(reason: "refused")
        mock.stub(.get, "/down", with: .status(200, fault: .failBeforeResponse(cause)))
        await #expect(throws: DecisionFixtures.Failure.self) { try await Self.send(mock, "/down") }
        #expect(mock.recordedRequests.count == 1)

        let (client, clientMock) = Fixtures.client()
        clientMock.stub(.get, "/probe", with: .status(200, fault: .failBeforeResponse(cause)))
        let error = try #require(await expectCourierError { try await client.send(Probe()) })
        #expect(error.code == .transportFailed)
        #expect(error.underlyingError as? DecisionFixtures.Failure == cause)
    }

    @Test("a response delay is slept on the mock's clock")
    func delayUsesClock() async throws {
        let clock = DecisionFixtures.RecordingClock()
        let mock = MockTransport(clock: clock)
        mock.stub(.get, "/slow", with: MockResponse(body: Data("late".utf8), delay: .seconds(5)))
        #expect(try await Self.send(mock, "/slow").text == "late")
        #expect(clock.sleeps == [.seconds(5)])
    }

    @Test("MockResponse helpers set status, content type and body")
    func responseHelpers() throws {
        let json = MockResponse.json(["b": 2, "a": 1], status: 201)
        #expect(json.status.code == 201)
        #expect(json.headerFields[.contentType] == "application/json")
        #expect(json.body == Data(#"{"a":1,"b":2}"#.utf8))
        let text = MockResponse.text("hi")
        #expect(text.headerFields[.contentType] == "text/plain; charset=utf-8")
        let chunked = MockResponse(body: Data("0123456789".utf8), chunkSize: 4)
        #expect(chunked.chunks.map { String(decoding: $0, as: UTF8.self) } == ["0123", "4567", "89"])
        #expect(chunked.body == Data("0123456789".utf8))
        // A slice of another Data keeps its parent's indices: chunking from 0 trapped.
        let slice = MockResponse(body: Data("xx0123456789".utf8).dropFirst(2), chunkSize: 4)
        #expect(slice.chunks.map { String(decoding: $0, as: UTF8.self) } == ["0123", "4567", "89"])
    }

    @Test("a chunked response arrives in its chunks")
    func chunkedResponseChunks() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/chunks", with: MockResponse(body: Data("0123456789".utf8), chunkSize: 4))
        let head = HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/chunks")
        let response = try await mock.send(OutgoingRequest(head: head), context: TransportContext())
        var chunks: [String] = []
        for try await chunk in response.body { chunks.append(String(decoding: chunk, as: UTF8.self)) }
        #expect(chunks == ["0123", "4567", "89"])
        #expect(response.body.length == .unknown)
    }

    /// The response to `path` straight from `mock`, for `method`.
    private static func response(
        _ mock: MockTransport, _ path: String, method: HTTPRequest.Method = .get
    ) async throws -> TransportResponse {
        let head = HTTPRequest(method: method, scheme: "https", authority: "api.example.com", path: path)
        return try await mock.send(OutgoingRequest(head: head), context: TransportContext())
    }

    @Test("cancelling the reading task fails the next body read with CancellationError, as on every transport")
    func cancelledBodyRead() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/chunks", with: MockResponse(body: Data("0123456789".utf8), chunkSize: 2))
        mock.stub(.get, "/stall", with: .text("0123456789", fault: .stallBody(afterBytes: 3)))
        for path in ["/chunks", "/stall"] {
            let response = try await Self.response(mock, path)
            let reader = Task { () -> (String?, (any Error)?) in
                var iterator = response.body.makeAsyncIterator()
                let first = try await iterator.next().map { String(decoding: $0, as: UTF8.self) }
                withUnsafeCurrentTask { $0?.cancel() }
                do {
                    _ = try await iterator.next()
                    return (first, nil)
                } catch {
                    return (first, error)
                }
            }
            let (first, error) = try await reader.value
            #expect(first == (path == "/stall" ? "012" : "01"))
            #expect(error is CancellationError, "\(path): \(String(describing: error))")
        }
    }

    @Test("a cancelled download of a mock body leaves no file and throws CancellationError")
    func cancelledDownload() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/file", with: .text("0123456789", fault: .stallBody(afterBytes: 3)))
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("mock-\(UUID().uuidString)")
        let transfer = client.transfer(TransferTests.Download(destination: destination))
        for await progress in transfer.progress where progress.direction == .download && progress.completedBytes == 3 {
            transfer.cancel()
        }
        await #expect(throws: CancellationError.self) { try await transfer.value }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    @Test("a response body is read once, as from a real transport")
    func bodyReadOnce() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/once", with: .text("hello"))
        let response = try await Self.response(mock, "/once")
        #expect(try await response.body.collect(upTo: .max) == Data("hello".utf8))
        let again = await expectCourierError { _ = try await response.body.collect(upTo: .max) }
        #expect(again?.code == .bodyNotReplayable)
    }

    @Test("the body is framed by the head: Content-Length, HEAD, 204 and 304, conflicts and codings")
    func framedByHead() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/short", with: .data(Data(count: 10), headerFields: [.contentLength: "100"]))
        mock.stub(.get, "/long", with: .data(Data(count: 10), headerFields: [.contentLength: "4"]))
        mock.stub(.head, "/head", with: .text("not sent"))
        mock.stub(.get, "/204", with: .text("not sent", status: 204))
        mock.stub(.get, "/304", with: .text("not sent", status: 304))
        mock.stub(.get, "/both", with: .text("x", headerFields: [.contentLength: "1", .transferEncoding: "chunked"]))
        mock.stub(.get, "/lengths", with: .text("x", headerFields: [.contentLength: "1, 2"]))
        mock.stub(.get, "/br", with: .text("x", headerFields: [.contentEncoding: "br"]))
        mock.stub(.get, "/gzip", with: .text("decoded", headerFields: [.contentEncoding: "gzip", .contentLength: "3"]))
        mock.stub(.get, "/unknown", with: MockResponse(body: Data("0123456789".utf8)))

        let short = try await Self.response(mock, "/short")
        #expect(short.body.length == .known(100))
        let truncated = await expectCourierError { _ = try await short.body.collect(upTo: .max) }
        #expect(truncated?.code == .truncatedResponse)
        #expect(truncated?.message == "truncated: received 10 of 100 bytes")
        #expect(try await Self.response(mock, "/long").body.collect(upTo: .max).count == 4)
        for (method, path) in [(HTTPRequest.Method.head, "/head"), (.get, "/204"), (.get, "/304")] {
            let response = try await Self.response(mock, path, method: method)
            #expect(response.body.length == .known(0), "\(path)")
            #expect(try await response.body.collect(upTo: .max).isEmpty, "\(path)")
        }
        for path in ["/both", "/lengths"] {
            let error = await expectCourierError { _ = try await Self.response(mock, path) }
            #expect(error?.code == .malformedResponse, "\(path)")
        }
        let brotli = await expectCourierError { _ = try await Self.response(mock, "/br") }
        #expect(brotli?.code == .unsupported)
        let gzip = try await Self.response(mock, "/gzip")
        #expect(gzip.body.length == .unknown)
        #expect(try await gzip.body.collect(upTo: .max) == Data("decoded".utf8))
        #expect(try await Self.response(mock, "/unknown").body.length == .unknown)
    }

    @Test("a body fault on a response without a body (HEAD, 204, 304) does not apply: the body ends with the head")
    func bodyFaultsOnResponsesWithoutABody() async throws {
        let mock = MockTransport()
        mock.stub(.head, "/head", with: .text("not sent", fault: .stallBody(afterBytes: 0)))
        mock.stub(.get, "/204", with: .status(204, fault: .stallBody(afterBytes: 0)))
        mock.stub(.get, "/304", with: .status(304, fault: .resetMidBody(afterBytes: 0)))
        for (method, path) in [(HTTPRequest.Method.head, "/head"), (.get, "/204"), (.get, "/304")] {
            let response = try await Self.response(mock, path, method: method)
            #expect(try await response.body.collect(upTo: .max).isEmpty, "\(path)")
        }
    }

    @Test("a request body that produces another length than it declared fails at the transport, as on the wire")
    func declaredRequestLength() async throws {
        let mock = MockTransport()
        mock.stub(.post, "/upload", with: .status(204))
        let chunks = [ArraySlice("abc".utf8)]
        let head = HTTPRequest(method: .post, scheme: "https", authority: "api.example.com", path: "/upload")
        for declared: Int64 in [5, 2] {
            let body = MessageBody(ChunkSequence(chunks: chunks), length: .known(declared), iterationBehavior: .single)
            let error = await expectCourierError {
                _ = try await mock.send(OutgoingRequest(head: head, body: body), context: TransportContext())
            }
            #expect(error?.code == .invalidBody)
            #expect(error?.stage == .transport)
        }
        let exact = MessageBody(ChunkSequence(chunks: chunks), length: .known(3), iterationBehavior: .single)
        let response = try await mock.send(OutgoingRequest(head: head, body: exact), context: TransportContext())
        #expect(response.head.status.code == 204)
        #expect(mock.recordedRequests.map(\.bodyText) == ["abc", "abc", "abc"])
    }

    @Test("an unstubbed request's message shows its body's size, not the body")
    func unstubbedBodyNotShown() async throws {
        let (client, _) = Fixtures.client()
        var probe = Probe(method: .post, path: "/nothing")
        probe.body = .json(["otp": "123456"])
        let error = try #require(await expectCourierError { try await client.send(probe) })
        let message = try #require(error.message)
        #expect(!message.contains("123456"))
        #expect(message.contains("# body of 16 bytes not shown"))
    }
}
