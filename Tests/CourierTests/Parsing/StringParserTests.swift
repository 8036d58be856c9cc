import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("StringParser", .timeLimit(.minutes(1)))
struct StringParserTests {
    private static func parse(_ bytes: [UInt8], contentType: String?) throws -> String {
        var fields = HTTPFields()
        if let contentType { fields[.contentType] = contentType }
        let response = ReceivedResponse(head: HTTPResponse(status: .ok, headerFields: fields), body: Data(bytes))
        let context = ParseContext(
            request: HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/p")
        )
        return try StringParser().parse(response, context: context)
    }

    /// "café" in ISO-8859-1: é is the single byte 0xE9.
    private static let cafeLatin1: [UInt8] = [0x63, 0x61, 0x66, 0xE9]

    @Test(
        "the charset of the Content-Type decides the decoding",
        arguments: [
            ("text/plain; charset=ISO-8859-1", cafeLatin1),
            ("text/plain; charset=iso-8859-1", cafeLatin1),
            ("text/html;charset=\"iso-8859-1\"", cafeLatin1),
            ("text/plain; format=flowed; charset=latin1", cafeLatin1),
            ("text/plain; charset=utf-8", Array("café".utf8)),
            ("text/plain", Array("café".utf8)),
            ("application/json; charset=UTF-8", Array("café".utf8)),
        ]
    )
    func charsetFromContentType(contentType: String, bytes: [UInt8]) throws {
        #expect(try Self.parse(bytes, contentType: contentType) == "café")
    }

    @Test(
        "UTF-16 and UTF-32 without a byte order mark, and Windows-1252, decode in their charset",
        arguments: [
            ("utf-16le", [0x68, 0x00, 0x69, 0x00], "hi"), ("UTF-16BE", [0x00, 0x68, 0x00, 0x69], "hi"),
            ("utf-32le", [0x68, 0, 0, 0, 0x69, 0, 0, 0], "hi"), ("windows-1252", [0x80, 0x41], "€A"),
        ] as [(String, [UInt8], String)])
    func moreCharsets(charset: String, bytes: [UInt8], text: String) throws {
        #expect(try Self.parse(bytes, contentType: "text/plain; charset=\(charset)") == text)
    }

    @Test(
        "a byte order mark names the encoding whatever the label, and is not part of the text",
        arguments: [
            (nil, [0xEF, 0xBB, 0xBF, 0x4F, 0x4B], "OK"),
            ("text/plain; charset=utf-8", [0xEF, 0xBB, 0xBF, 0x4F, 0x4B], "OK"),
            ("text/plain; charset=iso-8859-1", [0xEF, 0xBB, 0xBF, 0x63, 0x61, 0x66, 0xC3, 0xA9], "café"),
            (nil, [0xFF, 0xFE, 0x68, 0x00], "h"),
            (nil, [0xFE, 0xFF, 0x00, 0x68], "h"),
            ("text/plain; charset=utf-16le", [0xFF, 0xFE, 0x68, 0x00, 0x69, 0x00], "hi"),
            ("text/plain; charset=koi8-r", [0xEF, 0xBB, 0xBF, 0x4F, 0x4B], "OK"),
            (nil, [0xFF, 0xFE, 0x00, 0x00, 0x41, 0x00, 0x00, 0x00], "A"),
            ("text/plain; charset=utf-32be", [0x00, 0x00, 0xFE, 0xFF, 0x00, 0x00, 0x00, 0x41], "A"),
        ] as [(String?, [UInt8], String)])
    func byteOrderMark(contentType: String?, bytes: [UInt8], text: String) throws {
        #expect(try Self.parse(bytes, contentType: contentType) == text)
    }

    @Test("a charset StringParser does not know decodes plain ASCII, and fails on anything else instead of guessing")
    func unknownCharset() throws {
        #expect(try Self.parse(Array("plain".utf8), contentType: "text/plain; charset=iso-8859-15") == "plain")
        let error = try #require(throws: CourierError.self) {
            // Valid UTF-8, but in KOI8-R these bytes are other letters: guessing UTF-8 would return the wrong text.
            try Self.parse(Array("café".utf8), contentType: "text/plain; charset=koi8-r")
        }
        #expect(error.code == .decodingFailed)
        #expect(error.message?.contains("koi8-r") == true)
    }

    @Test("no Content-Type means UTF-8")
    func defaultsToUTF8() throws {
        #expect(try Self.parse(Array("naïve ✓".utf8), contentType: nil) == "naïve ✓")
        #expect(try Self.parse([], contentType: nil) == "")
    }

    @Test("US-ASCII and UTF-16 (with a byte order mark) are understood")
    func asciiAndUTF16() throws {
        #expect(try Self.parse(Array("plain".utf8), contentType: "text/plain; charset=us-ascii") == "plain")
        #expect(
            try Self.parse([0xFE, 0xFF, 0x00, 0x68, 0x00, 0x69], contentType: "text/plain; charset=utf-16") == "hi")
    }

    @Test(
        "invalid UTF-8 fails with decodingFailed at parse",
        arguments: [[0xC3, 0x28], [0xFF, 0xFE, 0xFD], [0x63, 0x61, 0x66, 0xE9]] as [[UInt8]]
    )
    func invalidUTF8(bytes: [UInt8]) throws {
        let error = try #require(throws: CourierError.self) {
            try Self.parse(bytes, contentType: "text/plain; charset=utf-8")
        }
        #expect(error.code == .decodingFailed)
        #expect(error.stage == .parse)
        #expect(error.message == "the body is not valid utf-8 text")
    }

    @Test("the same Latin-1 bytes without a charset fail instead of turning into garbage")
    func latin1WithoutCharsetFails() throws {
        let error = try #require(throws: CourierError.self) { try Self.parse(Self.cafeLatin1, contentType: nil) }
        #expect(error.code == .decodingFailed)
    }

    @Test("through the client, a Latin-1 response becomes the right String")
    func throughClient() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(
            .get, "/probe",
            with: .data(Data(Self.cafeLatin1), headerFields: [.contentType: "text/plain; charset=iso-8859-1"])
        )
        #expect(try await client.send(Probe()) == "café")
    }

    @Test("through the client, invalid UTF-8 fails the call at parse with the trace")
    func invalidThroughClient() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .data(Data([0xC3, 0x28]), headerFields: [.contentType: "text/plain"]))
        let error = try #require(await expectCourierError { try await client.send(Probe()) })
        #expect(error.code == .decodingFailed)
        #expect(error.stage == .parse)
        #expect(error.trace.description == "validateStatus ✓ → parse ✗")
    }
}
