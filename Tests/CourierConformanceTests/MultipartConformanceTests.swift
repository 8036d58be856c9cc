import Courier
import Foundation
import HTTPTypes
import Testing

extension Conformance {
    /// Multipart bodies on the wire: werkzeug (real httpbin) and the embedded server parse them back.
    @Suite("Conformance: multipart/form-data", .timeLimit(.minutes(2)))
    struct MultipartConformanceTests {
        /// httpbin's echo of a multipart POST.
        struct MultipartEcho: Decodable, Sendable {
            let form: [String: String]
            let files: [String: String]
            let headers: [String: String]
        }

        @Test(
            "a field, a text file and a binary file are echoed as form and files", arguments: TransportKind.all,
            ServerKind.all)
        func fieldAndFiles(transport: TransportKind, server: ServerKind) async throws {
            let binary = Data((0..<512).map { UInt8(truncatingIfNeeded: $0 &* 7) })  // invalid UTF-8: base64 echo
            let text = "line one\r\nline two, with \"quotes\" and ünïcödé\n"
            let textFile = FileManager.default.temporaryDirectory.appendingPathComponent("courier-mp-\(UUID()).txt")
            try Data(text.utf8).write(to: textFile)
            defer { try? FileManager.default.removeItem(at: textFile) }

            try await server.withBaseURL { baseURL in
                let client = makeClient(transport, baseURL)
                let form: MultipartFormData = [
                    .field(name: "greeting", value: "hello world & more=stuff"),
                    .file(name: "notes", fileURL: textFile, filename: "../notes.txt"),
                    .file(name: "picture", filename: "pixel.png", data: binary),
                ]
                let echo = try await client.send(
                    HTTPBinCall<MultipartEcho>(method: .post, path: "/post", body: .multipart(form))
                )
                #expect(echo.form == ["greeting": "hello world & more=stuff"])
                #expect(echo.files["notes"] == text)
                #expect(echo.files["picture"] == "data:image/png;base64,\(binary.base64EncodedString())")
                #expect(echo.files.count == 2)
                let contentType = try #require(echo.headers["Content-Type"])
                #expect(contentType.hasPrefix("multipart/form-data; boundary=courier-"))
            }
        }

        @Test(
            "a 64 MiB file streams to /upload whole, with upload progress to the last byte",
            arguments: TransportKind.all)
        func largeUpload(transport: TransportKind) async throws {
            struct Uploaded: Decodable, Sendable { let bytes: Int64 }
            let size = 64 * 1024 * 1024
            let file = try Self.temporaryFile(count: size)
            defer { try? FileManager.default.removeItem(at: file) }

            try await ServerKind.embedded.withBaseURL { baseURL in
                let client = makeClient(transport, baseURL)
                let body = RequestBody.multipart([.file(name: "file", fileURL: file, filename: "big.bin")])
                let transfer = client.transfer(HTTPBinCall<Uploaded>(method: .post, path: "/upload", body: body))
                var last: TransferProgress?
                for await step in transfer.progress where step.direction == .upload { last = step }
                let reply = try await transfer.value

                let boundaryLine = "--courier-" + String(repeating: "0", count: 32)  // the length of any boundary line
                let overhead =
                    boundaryLine.utf8.count + 2
                    + "Content-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n".utf8.count
                    + "Content-Type: application/octet-stream\r\n\r\n".utf8.count
                    + 2 + boundaryLine.utf8.count + 4
                #expect(reply.bytes == Int64(size + overhead))
                #expect(last?.completedBytes == Int64(size + overhead))
                #expect(last?.totalBytes == Int64(size + overhead))
            }
        }

        @Test(
            "a body from memory sent with upload progress goes as without it: with its Content-Length, not chunked",
            arguments: TransportKind.all)
        func progressKeepsFraming(transport: TransportKind) async throws {
            struct Echo: Decodable, Sendable { let headers: [String: String] }
            let size = 256 * 1024
            try await ServerKind.embedded.withBaseURL { baseURL in
                let client = makeClient(transport, baseURL)
                let call = HTTPBinCall<Echo>(
                    method: .post, path: "/post", body: .text(String(repeating: "a", count: size)))
                let plain = try await client.send(call)
                let transfer = client.transfer(call)
                var last: TransferProgress?
                for await step in transfer.progress where step.direction == .upload { last = step }
                let observed = try await transfer.value
                for echo in [plain, observed] {
                    #expect(echo.headers["Content-Length"] == "\(size)", "\(echo.headers)")
                    #expect(echo.headers["Transfer-Encoding"] == nil, "\(echo.headers)")
                }
                #expect(last?.completedBytes == Int64(size))
                #expect(last?.totalBytes == Int64(size))
            }
        }

        /// A temporary file of `count` bytes, written 1 MiB at a time.
        private static func temporaryFile(count: Int) throws -> URL {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-mp-\(UUID()).bin")
            try #require(FileManager.default.createFile(atPath: url.path, contents: nil))
            let handle = try FileHandle(forWritingTo: url)
            defer { try? handle.close() }
            let piece = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0) })
            for _ in 0..<(count / piece.count) {
                try handle.write(contentsOf: piece)
            }
            try handle.write(contentsOf: piece.prefix(count % piece.count))
            return url
        }
    }
}
