import CourierTesting
import Foundation
import HTTPTypes
import Testing

@testable import CourierCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("MultipartFormData", .timeLimit(.minutes(2)))
struct MultipartFormDataTests {
    @Test("a field and a file: exact bytes on the wire, Content-Type and Content-Length")
    func twoPartBody() async throws {
        let form: MultipartFormData = [
            .field(name: "title", value: "Hello, wörld"),
            .file(name: "upload", filename: "a.txt", data: Data("file\r\ncontent".utf8)),
        ]
        let request = try await MultipartFixtures.send(form)
        let boundary = try MultipartFixtures.boundary(from: request.head.headerFields[.contentType])
        let expected =
            "--\(boundary)\r\n"
            + "Content-Disposition: form-data; name=\"title\"\r\n"
            + "\r\n"
            + "Hello, wörld\r\n"
            + "--\(boundary)\r\n"
            + "Content-Disposition: form-data; name=\"upload\"; filename=\"a.txt\"\r\n"
            + "Content-Type: text/plain\r\n"
            + "\r\n"
            + "file\r\ncontent\r\n"
            + "--\(boundary)--\r\n"
        let body = try #require(request.body)
        #expect(body == Data(expected.utf8))
        #expect(request.head.headerFields[.contentLength] == String(body.count))

        let parts = try MultipartFixtures.parse([UInt8](body), boundary: boundary)
        #expect(parts.count == 2)
        #expect(parts.first?.disposition == "form-data; name=\"title\"")
        #expect(parts.first?.contentType == nil)
        #expect(parts.first?.content == Array("Hello, wörld".utf8))
        #expect(parts.last?.disposition == "form-data; name=\"upload\"; filename=\"a.txt\"")
        #expect(parts.last?.content == Array("file\r\ncontent".utf8))
    }

    @Test("Content-Length equals the bytes sent, with fields, bytes, a file and a stream of known length")
    func contentLengthMatches() async throws {
        let file = try MultipartFixtures.temporaryFile(count: 200_001, name: "photo.png")
        defer { MultipartFixtures.remove(file) }
        var form = MultipartFormData()
        form.append(.field(name: "a", value: ""))
        form.append(.file(name: "big", filename: "big.bin", data: Data(repeating: 7, count: 70_000)))
        form.append(.file(name: "photo", fileURL: file))
        form.append(
            .stream(
                name: "s", length: .known(6),
                body: AsyncStream { continuation in
                    continuation.yield(ArraySlice(Array("abc".utf8)))
                    continuation.yield(ArraySlice(Array("def".utf8)))
                    continuation.finish()
                })
        )
        let request = try await MultipartFixtures.send(form)
        let body = try #require(request.body)
        #expect(request.head.headerFields[.contentLength] == String(body.count))
        let (_, parts) = try MultipartFixtures.parts(of: request)
        #expect(parts.map(\.content.count) == [0, 70_000, 200_001, 6])
        #expect(parts[2].content == [UInt8](try Data(contentsOf: file)))
        #expect(parts[2].contentType == "image/png")
        #expect(parts[3].content == Array("abcdef".utf8))
    }

    @Test(
        "names and filenames escape \", CR and LF as WHATWG does; no filename*",
        arguments: [
            ("a\"b", "a%22b"), ("a\rb", "a%0Db"), ("a\nb", "a%0Ab"),
            ("x\"\r\nX-Injected: yes", "x%22%0D%0AX-Injected: yes"),
            ("100% naïve ü", "100% naïve ü"),
        ]
    )
    func escaping(raw: String, escaped: String) async throws {
        let form: MultipartFormData = [
            .field(name: raw, value: "v"),
            .file(name: raw, filename: raw + ".txt", data: Data("f".utf8)),
        ]
        let request = try await MultipartFixtures.send(form)
        let (_, parts) = try MultipartFixtures.parts(of: request)
        try #require(parts.count == 2)
        #expect(parts[0].headers == ["Content-Disposition: form-data; name=\"\(escaped)\""])
        #expect(
            parts[1].headers == [
                "Content-Disposition: form-data; name=\"\(escaped)\"; filename=\"\(escaped).txt\"",
                "Content-Type: text/plain",
            ]
        )
        #expect(request.bodyText?.contains("filename*") == false)
    }

    @Test(
        "filenames lose every directory component, with / and \\",
        arguments: [
            ("../../etc/passwd", "passwd"), ("..\\..\\windows\\win.ini", "win.ini"), ("/abs/path/x.txt", "x.txt"),
            ("dir/sub\\mixed.csv", "mixed.csv"), ("plain.json", "plain.json"), ("..", ""), ("dir/", ""),
            // A combining mark after the separator: one `Character` with it, but still a separator.
            ("../\u{301}secret", "\u{301}secret"), ("..\\\u{301}secret", "\u{301}secret"),
        ]
    )
    func directoryStripping(filename: String, sent: String) async throws {
        #expect(MultipartFormData.Part.file(name: "f", filename: filename, data: Data()).filename == sent)
        let url = URL(fileURLWithPath: "/tmp/source.bin")
        #expect(MultipartFormData.Part.file(name: "f", fileURL: url, filename: filename).filename == sent)
        #expect(MultipartFormData.Part.stream(name: "f", filename: filename, body: MessageBody([])).filename == sent)

        let request = try await MultipartFixtures.send([.file(name: "f", filename: filename, data: Data("x".utf8))])
        let (_, parts) = try MultipartFixtures.parts(of: request)
        #expect(parts.first?.disposition == "form-data; name=\"f\"; filename=\"\(sent)\"")
    }

    @Test(
        "a file part's Content-Type is guessed from its extension unless given",
        arguments: [
            ("a.txt", "text/plain"), ("a.html", "text/html"), ("a.json", "application/json"),
            ("a.xml", "application/xml"), ("a.csv", "text/csv"), ("a.png", "image/png"), ("a.jpg", "image/jpeg"),
            ("A.JPEG", "image/jpeg"), ("a.gif", "image/gif"), ("a.webp", "image/webp"), ("a.svg", "image/svg+xml"),
            ("a.pdf", "application/pdf"), ("a.zip", "application/zip"), ("a.tar.gz", "application/gzip"),
            ("a.mp4", "video/mp4"), ("a.mp3", "audio/mpeg"), ("a.wav", "audio/wav"),
            ("a.unknown", "application/octet-stream"), ("noextension", "application/octet-stream"),
            (".hidden", "application/octet-stream"),
        ]
    )
    func contentTypeGuessing(filename: String, contentType: String) async throws {
        let request = try await MultipartFixtures.send([
            .field(name: "field", value: "v"),
            .file(name: "guessed", filename: filename, data: Data("x".utf8)),
            .file(name: "given", filename: filename, contentType: "text/x-custom", data: Data("x".utf8)),
            .stream(name: "anonymous", body: MessageBody(Data("y".utf8))),
        ])
        let (_, parts) = try MultipartFixtures.parts(of: request)
        #expect(parts.map(\.contentType) == [nil, contentType, "text/x-custom", "application/octet-stream"])
    }

    @Test("two bodies in a row get different boundaries of at least 128 random bits")
    func boundaryIsRandomPerBody() async throws {
        let form: MultipartFormData = [.field(name: "a", value: "1")]
        let first = try MultipartFixtures.boundary(
            from: try await MultipartFixtures.send(form).head.headerFields[.contentType]
        )
        let second = try MultipartFixtures.boundary(
            from: try await MultipartFixtures.send(form).head.headerFields[.contentType]
        )
        #expect(first != second)
        for boundary in [first, second] {
            #expect(boundary.hasPrefix("courier-"))
            let digits = boundary.dropFirst("courier-".count)
            #expect(digits.count >= 32)
            let isHex = digits.allSatisfy { "0123456789abcdef".contains($0) }
            #expect(isHex)
            #expect(boundary.count <= 70)  // RFC 2046 §5.1.1
        }
    }

    @Test("content containing the boundary forces a new one", arguments: ["field", "data", "name", "filename"])
    func boundaryCollision(placement: String) throws {
        var probe = ScriptedGenerator([0xDEAD_BEEF, 0x1234, 0xFEED, 0x5678])
        let colliding = MultipartFormData.randomBoundary(using: &probe)
        let next = MultipartFormData.randomBoundary(using: &probe)
        #expect(colliding == "courier-00000000deadbeef0000000000001234")

        let text = "before \(colliding) after"
        let part: MultipartFormData.Part =
            switch placement {
            case "field": .field(name: "f", value: text)
            case "data": .file(name: "f", filename: "a.bin", data: Data(text.utf8))
            case "name": .field(name: text, value: "v")
            default: .file(name: "f", filename: text, data: Data())
            }
        var generator = ScriptedGenerator([0xDEAD_BEEF, 0x1234, 0xFEED, 0x5678])
        let encoded = try MultipartFormData.Encoded([part], generator: &generator)
        #expect(encoded.boundary == next)
        #expect(encoded.contentType == "multipart/form-data; boundary=\(next)")

        var same = ScriptedGenerator([0xDEAD_BEEF, 0x1234])
        let error = try #require(throws: CourierError.self) { try MultipartFormData.Encoded([part], generator: &same) }
        #expect(error.code == .invalidBody)
    }

    @Test("a stream of unknown length makes the body chunked: no Content-Length")
    func unknownLength() async throws {
        let stream = MultipartFixtures.oneShot([Array("abc".utf8)], length: .unknown)
        let request = try await MultipartFixtures.send([
            .field(name: "a", value: "1"), .stream(name: "s", filename: "s.txt", body: stream),
        ])
        #expect(request.head.headerFields[.contentLength] == nil)
        let (_, parts) = try MultipartFixtures.parts(of: request)
        #expect(parts.last?.content == Array("abc".utf8))
        #expect(parts.last?.contentType == "text/plain")
    }

    @Test(
        "a streamed part whose declared length is negative or overflows the total is invalidBody, not a trap",
        arguments: [Int64.max, Int64.max - 10, -1])
    func declaredLengthOverflow(length: Int64) throws {
        var generator = SystemRandomNumberGenerator()
        let error = try #require(throws: CourierError.self) {
            try MultipartFormData.Encoded(
                [
                    .field(name: "a", value: "1"),
                    .stream(name: "s", body: MultipartFixtures.oneShot([[1]], length: .known(length))),
                ],
                generator: &generator
            )
        }
        #expect(error.code == .invalidBody)
        #expect(error.message?.contains("cannot be framed") == true)
    }

    @Test("bytes and files are replayable; a one-shot stream part makes the whole body one-shot")
    func replayability() async throws {
        let file = try MultipartFixtures.temporaryFile(count: 1000)
        defer { MultipartFixtures.remove(file) }
        var generator = SystemRandomNumberGenerator()
        let replayable = try MultipartFormData.Encoded(
            [
                .field(name: "a", value: "1"), .file(name: "f", fileURL: file),
                .stream(name: "m", body: MessageBody([1])),
            ],
            generator: &generator
        )
        #expect(replayable.body.isReplayable)
        let once = try await MultipartFixtures.drain(replayable.body).bytes
        #expect(try await MultipartFixtures.drain(replayable.body).bytes == once)
        #expect(Int64(once.count) == replayable.body.length.knownCount)

        let oneShot = try MultipartFormData.Encoded(
            [
                .field(name: "a", value: "1"),
                .stream(name: "s", length: .known(3), body: MultipartFixtures.oneShot([[1, 2, 3]], length: .known(3))),
            ],
            generator: &generator
        )
        #expect(!oneShot.body.isReplayable)
        #expect(oneShot.body.iterationBehavior == .single)
        _ = try await MultipartFixtures.drain(oneShot.body)
        let error = await expectCourierError { try await MultipartFixtures.drain(oneShot.body) }
        #expect(error?.code == .bodyNotReplayable)
    }

    @Test("a 10 MiB file streams in chunks of at most 64 KiB, never whole")
    func largeFileStreams() async throws {
        let size = 10 * 1024 * 1024
        let file = try MultipartFixtures.temporaryFile(count: size, name: "movie.mp4")
        defer { MultipartFixtures.remove(file) }
        var generator = SystemRandomNumberGenerator()
        let encoded = try MultipartFormData.Encoded(
            [.field(name: "title", value: "movie"), .file(name: "movie", fileURL: file)],
            generator: &generator
        )
        var chunks = 0
        var largest = 0
        var total: Int64 = 0
        for try await chunk in encoded.body {
            chunks += 1
            largest = max(largest, chunk.count)
            total += Int64(chunk.count)
        }
        #expect(largest <= 64 * 1024)
        #expect(chunks >= size / (64 * 1024) + 2)  // the file's chunks, the headers before it, the close after it
        #expect(encoded.body.length == .known(total))
        #expect(total > Int64(size))
    }

    @Test("a streamed part that yields more or fewer bytes than announced fails with invalidBody")
    func lengthMismatch() async throws {
        for (announced, chunks) in [(5, [[UInt8](repeating: 1, count: 3)]), (2, [[1, 2], [3]])] {
            var generator = SystemRandomNumberGenerator()
            let encoded = try MultipartFormData.Encoded(
                [
                    .stream(
                        name: "s", length: .known(Int64(announced)),
                        body: MultipartFixtures.oneShot(chunks, length: .known(Int64(announced))))
                ],
                generator: &generator
            )
            let error = await expectCourierError { try await MultipartFixtures.drain(encoded.body) }
            #expect(error?.code == .invalidBody)
        }
    }

    @Test("a missing file or a directory fails at the adapt stage; a CRLF in a content type is refused")
    func invalidParts() async throws {
        let missing = URL(fileURLWithPath: "/nonexistent/courier-\(UUID()).bin")
        let cases: [(RequestBody, CourierError.Code)] = [
            (.multipart([.file(name: "f", fileURL: missing)]), .invalidBody),
            (.multipart([.file(name: "f", fileURL: FileManager.default.temporaryDirectory)]), .invalidBody),
            (
                .multipart([.file(name: "f", filename: "a", contentType: "text/plain\r\nX-Injected: 1", data: Data())]),
                .invalidHeader
            ),
        ]
        for (body, code) in cases {
            let (client, mock) = Fixtures.client()
            mock.stub(.post, "/probe", with: .text("ok"))
            var probe = Probe(method: .post)
            probe.body = body
            let error = await expectCourierError { try await client.send(probe) }
            #expect(error?.code == code)
            #expect(error?.stage == .adapt)
            #expect(mock.recordedRequests.isEmpty)
        }
    }

    @Test("a file part from a named pipe is sent chunked, not announced as its size of 0")
    func namedPipePart() async throws {
        let path = try makeNamedPipe(writing: Data("abc".utf8))
        defer { unlink(path) }
        var generator = SystemRandomNumberGenerator()
        let encoded = try MultipartFormData.Encoded(
            [.file(name: "f", fileURL: URL(fileURLWithPath: path))], generator: &generator)
        #expect(encoded.body.length == .unknown)
        #expect(!encoded.body.isReplayable)  // read again, a pipe gives nothing (or blocks)
        let text = String(decoding: try await MultipartFixtures.drain(encoded.body).bytes, as: UTF8.self)
        #expect(text.contains("\r\n\r\nabc\r\n--"))
    }

}
