import AsyncHTTPClient
import CourierTestServer
import NIOCore
import NIOHTTP1
import Testing

@Suite("fault routes", .timeLimit(.minutes(2)))
struct FaultRoutesTests {
    /// Each of these must fail the request; none may produce a short "success".
    @Test(arguments: [
        "/fault/truncate?announce=100&send=9",
        "/fault/reset-mid-body?announce=100&send=9",
        "/fault/chunked-truncated",
        "/fault/duplicate-content-length",
        "/fault/content-length-and-chunked",
        "/fault/header-flood?count=100000",
        "/fault/huge-header?size=1048576",
        "/fault/reset-on-request",
        "/fault/close-on-request",
    ])
    func brokenResponsesThrow(path: String) async throws {
        try await withServer { server, client in
            await #expect(throws: (any Error).self) {
                let response = try await client.fetch(server, path)
                Issue.record("unexpected success: \(response.status), \(response.body.count) bytes")
            }
        }
    }

    @Test func truncationIsReportedAsAConnectionError() async throws {
        try await withServer { server, client in
            let request = HTTPClientRequest(url: "\(server.baseURL)/fault/truncate?announce=100&send=9")
            let response = try await client.execute(request, timeout: .seconds(10))
            #expect(response.headers["Content-Length"] == ["100"])
            var received = 0
            // AHC reports a body cut short of its Content-Length as the parser's invalid EOF state.
            await #expect(throws: HTTPParserError.invalidEOFState) {
                for try await buffer in response.body {
                    received += buffer.readableBytes
                }
            }
            #expect(received <= 9)
        }
    }

    @Test func stallAfterHeadersHitsTheReadTimeout() async throws {
        let configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(5), read: .milliseconds(300))
        )
        try await withServer(configuration: configuration) { server, client in
            await #expect(throws: HTTPClientError.readTimeout) {
                try await client.fetch(server, "/fault/stall-after-headers")
            }
        }
    }

    @Test func neverAnswerHitsTheDeadline() async throws {
        try await withServer { server, client in
            await #expect(throws: HTTPClientError.deadlineExceeded) {
                // Long enough for the head to reach the server on a loaded machine: it counts the request.
                try await client.fetch(server, "/fault/never-answer", timeout: .seconds(2))
            }
            #expect(server.requestCount == 1)
        }
    }

    @Test func dripDeliversEveryByte() async throws {
        try await withServer { server, client in
            let response = try await client.fetch(server, "/fault/drip?bytes=5&interval_ms=10")
            #expect(response.text == "*****")
        }
    }

    @Test("a HEAD of a drip, and a drip with a status that has no body, send none: the connection stays usable")
    func dripWithoutBody() async throws {
        try await withServer { server, client in
            for (method, path) in [
                (HTTPMethod.HEAD, "/fault/drip?bytes=3&interval_ms=0"), (.GET, "/drip?numbytes=3&duration=0&code=204"),
                (.GET, "/drip?numbytes=3&duration=0&code=304"),
            ] {
                let response = try await client.fetch(server, path, method: method)
                #expect(response.body.isEmpty, "\(path)")
                // The next request on the same keep-alive connection: before, the body's bytes came first, and the
                // answer did not parse.
                let next = try await client.fetch(server, "/get")
                #expect(next.status == 200, "\(path)")
                #expect(server.connectionCount == 1, "\(path)")
            }
        }
    }

    @Test func extraResponseNeverReachesTheNextRequest() async throws {
        try await withServer { server, client in
            let first = try await client.fetch(server, "/fault/extra-response")
            #expect(first.text == "first")
            // AHC must drop the connection that carried the unsolicited response; the next answer is genuine.
            let second = try? await client.fetch(server, "/get")
            #expect(second.map { $0.text.contains("smuggled") } != true)
        }
    }

    @Test func closeIdleAfterResponseAnswersThenCloses() async throws {
        try await withServer { server, client in
            let first = try await client.fetch(server, "/fault/close-idle-after-response")
            #expect(first.status == 200)
            #expect(first.headers["Connection"].isEmpty)
        }
    }
}
