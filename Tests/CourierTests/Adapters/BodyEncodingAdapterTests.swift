import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("BodyEncodingAdapter", .timeLimit(.minutes(1)))
struct BodyEncodingAdapterTests {
    struct NewUser: Encodable, Sendable {
        var userName: String
        var age: Int
    }

    // MARK: JSON

    @Test("json uses the client's encoder and sets application/json")
    func jsonWithClientEncoder() async throws {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys]
        let adapted = try await BodyEncodingAdapter(.json(NewUser(userName: "ada", age: 36))).adapt(
            AdapterFixtures.outgoing(method: .post), context: AdapterFixtures.context(jsonEncoder: encoder))
        #expect(try await adapted.bodyText() == #"{"age":36,"user_name":"ada"}"#)
        #expect(adapted.head.headerFields[.contentType] == "application/json")
        #expect(adapted.body?.isReplayable == true)
        #expect(adapted.body?.length == .known(28))
    }

    @Test("json with its own encoder ignores the client's")
    func jsonWithOverridingEncoder() async throws {
        let clientEncoder = JSONEncoder()
        clientEncoder.keyEncodingStrategy = .convertToSnakeCase
        clientEncoder.outputFormatting = [.sortedKeys]
        let own = JSONEncoder()
        own.outputFormatting = [.sortedKeys]
        let adapted = try await BodyEncodingAdapter(.json(NewUser(userName: "ada", age: 36), encoder: own)).adapt(
            AdapterFixtures.outgoing(method: .post), context: AdapterFixtures.context(jsonEncoder: clientEncoder))
        #expect(try await adapted.bodyText() == #"{"age":36,"userName":"ada"}"#)
    }

    @Test("json through a client: the configured encoder, Content-Type and Content-Length reach the transport")
    func jsonThroughClient() async throws {
        let (client, mock) = AdapterFixtures.answeringClient {
            let encoder = JSONEncoder()
            encoder.keyEncodingStrategy = .convertToSnakeCase
            encoder.outputFormatting = [.sortedKeys]
            $0.jsonEncoder = encoder
        }
        _ = try await client.send(AdapterFixtures.probe(method: .post, body: .json(NewUser(userName: "é", age: 1))))
        let sent = try #require(mock.recordedRequests.first)
        let expected = #"{"age":1,"user_name":"é"}"#
        #expect(sent.bodyText == expected)
        #expect(sent.head.headerFields[.contentType] == "application/json")
        #expect(sent.head.headerFields.values(named: "Content-Length") == [String(expected.utf8.count)])
    }

    @Test("a value JSON cannot encode is encodingFailed at the adapt stage")
    func jsonEncodingFailure() async throws {
        let error = await expectCourierError {
            try await BodyEncodingAdapter(.json(Unencodable())).adapt(
                AdapterFixtures.outgoing(method: .post), context: AdapterFixtures.context())
        }
        #expect(error?.code == .encodingFailed)
        #expect(error?.stage == .adapt)
        #expect(error?.underlyingError is EncodingError)
    }

    // MARK: Form

    @Test("form uses the client's form encoder and sets the form content type")
    func formWithClientEncoder() async throws {
        let context = AdapterFixtures.context(formEncoder: URLEncodedFormEncoder(spaceEncoding: .plus))
        let adapted = try await BodyEncodingAdapter(.form(["q": "a b+c", "n": "1"])).adapt(
            AdapterFixtures.outgoing(method: .post), context: context)
        #expect(try await adapted.bodyText() == "n=1&q=a+b%2Bc")
        #expect(adapted.head.headerFields[.contentType] == "application/x-www-form-urlencoded")
    }

    @Test("form with its own encoder ignores the client's")
    func formWithOverridingEncoder() async throws {
        let context = AdapterFixtures.context(formEncoder: URLEncodedFormEncoder(spaceEncoding: .plus))
        let body = RequestBody.form(["q": "a b;c"], encoder: URLEncodedFormEncoder(spaceEncoding: .percentEscaped))
        let adapted = try await BodyEncodingAdapter(body).adapt(
            AdapterFixtures.outgoing(method: .post), context: context)
        #expect(try await adapted.bodyText() == "q=a%20b%3Bc")
    }

    @Test("form through a client")
    func formThroughClient() async throws {
        let (client, mock) = AdapterFixtures.answeringClient()
        _ = try await client.send(AdapterFixtures.probe(method: .post, body: .form(["x&y": "=", "k": "é"])))
        let sent = try #require(mock.recordedRequests.first)
        #expect(sent.bodyText == "k=%C3%A9&x%26y=%3D")
        #expect(sent.head.headerFields[.contentType] == "application/x-www-form-urlencoded")
        #expect(sent.head.headerFields[.contentLength] == "18")
    }

    @Test("a form body whose top level is not keyed is encodingFailed")
    func formEncodingFailure() async throws {
        let error = await expectCourierError {
            try await BodyEncodingAdapter(.form(["a", "b"])).adapt(
                AdapterFixtures.outgoing(method: .post), context: AdapterFixtures.context())
        }
        #expect(error?.code == .encodingFailed)
        #expect(error?.stage == .adapt)
    }

    // MARK: Bytes, text, stream

    @Test("bytes are sent as given with their content type")
    func bytes() async throws {
        let data = Data([0x00, 0xFF, 0x0D, 0x0A])
        let adapted = try await BodyEncodingAdapter(.bytes(data, contentType: "image/png")).adapt(
            AdapterFixtures.outgoing(method: .put), context: AdapterFixtures.context())
        #expect(try await adapted.body?.collect(upTo: .max) == data)
        #expect(adapted.head.headerFields[.contentType] == "image/png")
    }

    @Test("bytes default to application/octet-stream")
    func bytesDefaultContentType() async throws {
        let adapted = try await BodyEncodingAdapter(.bytes(Data("x".utf8))).adapt(
            AdapterFixtures.outgoing(method: .put), context: AdapterFixtures.context())
        #expect(adapted.head.headerFields[.contentType] == "application/octet-stream")
    }

    @Test("bytes with no content type set none and keep an earlier one")
    func bytesWithoutContentType() async throws {
        let plain = try await BodyEncodingAdapter(.bytes(Data("x".utf8), contentType: nil)).adapt(
            AdapterFixtures.outgoing(method: .put), context: AdapterFixtures.context())
        #expect(plain.head.headerFields[.contentType] == nil)
        #expect(try await plain.bodyText() == "x")

        let earlier = AdapterFixtures.outgoing(method: .put, headers: [.contentType: "application/cbor"])
        let kept = try await BodyEncodingAdapter(.bytes(Data("x".utf8), contentType: nil)).adapt(
            earlier, context: AdapterFixtures.context())
        #expect(kept.head.headerFields[.contentType] == "application/cbor")
    }

    @Test("text is UTF-8 with a charset; another content type can be given")
    func text() async throws {
        let adapted = try await BodyEncodingAdapter(.text("héllo")).adapt(
            AdapterFixtures.outgoing(method: .post), context: AdapterFixtures.context())
        #expect(try await adapted.body?.collect(upTo: .max) == Data([0x68, 0xC3, 0xA9, 0x6C, 0x6C, 0x6F]))
        #expect(adapted.body?.length == .known(6))
        #expect(adapted.head.headerFields[.contentType] == "text/plain; charset=utf-8")

        let csv = try await BodyEncodingAdapter(.text("a,b", contentType: "text/csv")).adapt(
            AdapterFixtures.outgoing(method: .post), context: AdapterFixtures.context())
        #expect(csv.head.headerFields[.contentType] == "text/csv; charset=utf-8")

        // A charset given is kept, and a type that is not text is left as it is.
        for (given, sent) in [
            ("text/html; Charset=ISO-8859-1", "text/html; Charset=ISO-8859-1"),
            ("application/x-ndjson", "application/x-ndjson"), ("TEXT/HTML", "TEXT/HTML; charset=utf-8"),
        ] {
            let adapted = try await BodyEncodingAdapter(.text("x", contentType: given)).adapt(
                AdapterFixtures.outgoing(method: .post), context: AdapterFixtures.context())
            #expect(adapted.head.headerFields[.contentType] == sent)
        }
    }

    @Test(
        "text in another charset is encoded in it, as labelled",
        arguments: [
            ("text/plain; charset=iso-8859-1", "café", [0x63, 0x61, 0x66, 0xE9]),
            ("text/plain; charset=\"Windows-1252\"", "€1", [0x80, 0x31]),
            ("text/plain; charset=utf-16be", "hi", [0x00, 0x68, 0x00, 0x69]),
            ("text/plain; charset=us-ascii", "ok", [0x6F, 0x6B]),
            ("text/plain; charset=koi8-r", "ok", [0x6F, 0x6B]),
            ("text/plain; charset=UTF8", "é", [0xC3, 0xA9]),
        ] as [(String, String, [UInt8])])
    func textInItsCharset(contentType: String, text: String, bytes: [UInt8]) async throws {
        let adapted = try await BodyEncodingAdapter(.text(text, contentType: contentType)).adapt(
            AdapterFixtures.outgoing(method: .post), context: AdapterFixtures.context())
        #expect(try await adapted.body?.collect(upTo: .max) == Data(bytes))
        #expect(adapted.head.headerFields[.contentType] == contentType)
    }

    @Test(
        "text its charset cannot encode fails with encodingFailed at adapt; nothing is sent",
        arguments: [("iso-8859-1", "€"), ("us-ascii", "é"), ("koi8-r", "é")])
    func textItsCharsetCannotEncode(charset: String, text: String) async throws {
        let (client, mock) = Fixtures.client()
        let error = await expectCourierError {
            try await client.send(
                AdapterFixtures.probe(method: .post, body: .text(text, contentType: "text/plain; charset=\(charset)")))
        }
        #expect(error?.code == .encodingFailed && error?.stage == .adapt, "\(String(describing: error))")
        #expect(error?.message?.contains(charset) == true, "\(String(describing: error))")
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test("a stream body is passed through one-shot with its content type")
    func streamDirectly() async throws {
        let stream = AdapterFixtures.stream(["ab", "cd"], length: .unknown)
        let adapted = try await BodyEncodingAdapter(.stream(stream, contentType: "application/x-ndjson")).adapt(
            AdapterFixtures.outgoing(method: .post), context: AdapterFixtures.context())
        let body = try #require(adapted.body)
        #expect(body.isReplayable == false)
        #expect(body.length == .unknown)
        #expect(adapted.head.headerFields[.contentType] == "application/x-ndjson")
        #expect(try await adapted.bodyText() == "abcd")
    }

    @Test("a stream through a client arrives whole, without Content-Length when its length is unknown")
    func streamThroughClient() async throws {
        let (client, mock) = AdapterFixtures.answeringClient()
        let body = RequestBody.stream(AdapterFixtures.stream(["x", "yz"], length: .unknown))
        _ = try await client.send(AdapterFixtures.probe(method: .post, body: body))
        let sent = try #require(mock.recordedRequests.first)
        #expect(sent.bodyText == "xyz")
        #expect(sent.head.headerFields[.contentType] == "application/octet-stream")
        #expect(sent.head.headerFields[.contentLength] == nil)
    }

    @Test("a content type with CR/LF is invalidHeader")
    func invalidContentType() async throws {
        let error = await expectCourierError {
            try await BodyEncodingAdapter(.text("x", contentType: "text/plain\r\nX-Injected: 1")).adapt(
                AdapterFixtures.outgoing(method: .post), context: AdapterFixtures.context())
        }
        #expect(error?.code == .invalidHeader)
    }

    // MARK: Ordering with request headers

    @Test("a Content-Type in the request's headers wins over the body's", arguments: ["json", "form", "text"])
    func requestHeaderWins(kind: String) async throws {
        let body: RequestBody =
            switch kind {
            case "json": .json(["a": 1])
            case "form": .form(["a": 1])
            default: .text("a=1")
            }
        let (client, mock) = AdapterFixtures.answeringClient()
        let probe = AdapterFixtures.probe(
            method: .post, headers: ["content-type": "application/vnd.api+json"], body: body)
        _ = try await client.send(probe)
        let sent = try #require(mock.recordedRequests.first)
        #expect(sent.head.headerFields.values(named: "Content-Type") == ["application/vnd.api+json"])
    }

    @Test(
        "a multipart Content-Type without a boundary, in the request's headers or an adapter's, keeps the body's",
        arguments: [false, true])
    func multipartHeaderKeepsBoundary(byAdapter: Bool) async throws {
        let (client, mock) = AdapterFixtures.answeringClient()
        let body = RequestBody.multipart([.field(name: "a", value: "1")])
        let probe =
            byAdapter
            ? AdapterFixtures.probe(
                method: .post, body: body, adapters: [.header("Content-Type", "multipart/form-data")])
            : AdapterFixtures.probe(method: .post, headers: ["content-type": "multipart/form-data"], body: body)
        _ = try await client.send(probe)
        let sent = try #require(mock.recordedRequests.first)
        let type = try #require(sent.head.headerFields[.contentType])
        #expect(type.hasPrefix("multipart/form-data; boundary="))
        let boundary = try #require(type.range(of: "boundary=").map { String(type[$0.upperBound...]) })
        #expect(sent.bodyText?.hasPrefix("--\(boundary)\r\n") == true)
        #expect(sent.bodyText?.hasSuffix("--\(boundary)--\r\n") == true)
    }

    @Test("a Content-Type set by an adapter after the body adapter wins")
    func laterAdapterWins() async throws {
        let (client, mock) = AdapterFixtures.answeringClient()
        let probe = AdapterFixtures.probe(
            method: .post, body: .json(["a": 1]), adapters: [.header("Content-Type", "application/merge-patch+json")])
        _ = try await client.send(probe)
        #expect(mock.recordedRequests.first?.head.headerFields[.contentType] == "application/merge-patch+json")
    }

    @Test("name and static-member lookup")
    func nameAndLookup() {
        let adapter: any RequestAdapter = .body(.text("x"))
        #expect(adapter.name == "body")
        #expect(adapter is BodyEncodingAdapter)
    }
}
