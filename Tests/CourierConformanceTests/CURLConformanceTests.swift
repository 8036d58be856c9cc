import Courier
import CourierTestServer
import Foundation
import HTTPTypes
import Testing

extension Conformance {
    /// `OutgoingRequest.cURLDescription()` run by the real curl against the embedded server: the command sends the
    /// request it describes.
    @Suite("Conformance: cURLDescription runs", .timeLimit(.minutes(1)))
    struct CURLConformanceTests {
        /// Runs `command` (a `cURLDescription()`) with curl quiet and a 5 s limit; its exit status and output.
        static func run(_ command: String) throws -> (status: Int32, output: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            let quieted = command.replacingOccurrences(
                of: "curl ", with: "curl -sS --max-time 5 ",
                range: command.startIndex..<command.index(command.startIndex, offsetBy: 5))
            process.arguments = ["-c", quieted]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let output = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: output, as: UTF8.self))
        }

        /// A request to `path` on `server` as the pipeline hands it to a transport: with its `Content-Length`.
        static func outgoing(
            _ method: HTTPRequest.Method, _ server: TestServer, _ path: String, body: String?, type: String?
        ) throws -> OutgoingRequest {
            let base = try #require(URLComponents(url: server.baseURL, resolvingAgainstBaseURL: false))
            var head = HTTPRequest(
                method: method, scheme: base.scheme, authority: "\(base.host ?? ""):\(base.port ?? 80)", path: path)
            if let type { head.headerFields[.contentType] = type }
            if let body { head.headerFields[.contentLength] = "\(body.utf8.count)" }
            return OutgoingRequest(head: head, body: body.map { MessageBody(Data($0.utf8)) })
        }

        @Test(
            "a body is sent byte for byte: JSON with spaces, text starting with @",
            arguments: [
                (#"{"name": "a",  "note": "x"}"#, "application/json"),
                ("@channel deploy done", "text/plain"),
                ("line one\nline 'two'\n", "text/plain"),
            ])
        func bodies(body: String, type: String) async throws {
            try await withTestServer { server in
                let command = try Self.outgoing(.post, server, "/anything", body: body, type: type).cURLDescription()
                let (status, output) = try Self.run(command)
                #expect(status == 0, "curl exited with \(status): \(command)")
                let echo = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]
                #expect(echo?["data"] as? String == body, "\(command)")
                #expect(server.requestCount == 1)
            }
        }

        @Test("a HEAD request ends when its head arrives")
        func head() async throws {
            try await withTestServer { server in
                let command = try Self.outgoing(.head, server, "/get", body: nil, type: nil).cURLDescription()
                let (status, output) = try Self.run(command)
                #expect(status == 0, "curl exited with \(status): \(command)")
                #expect(output.hasPrefix("HTTP/1.1 200"), "\(output)")
            }
        }
    }
}
