import Courier
import CourierTestServer
import Foundation
import HTTPTypes
import Testing

extension Conformance {
    /// Failing fast and truthfully on real sockets (reliability rows 21, 22, 23, 24, 25, 26, 47, 48), on every
    /// transport with a default client: each failure has one code on both transports, comes back within the time
    /// the network took, and the server sees exactly the attempts the trace reports.
    @Suite("Conformance: failing fast", .timeLimit(.minutes(3)))
    struct FailFastConformanceTests {
        struct Raw: Request {
            typealias Response = Data
            var method: HTTPRequest.Method = .get
            var path: String
            var query: Parameters? = nil
            var body: RequestBody? = nil
            var timeout: Duration? = nil
            var retryPolicy: RetryPolicy? = nil
            var decisionList: [any Decision] = [.validateStatus()]
            var decisions: [any Decision] { decisionList }
        }

        static func client(_ transport: any Transport, _ url: URL) -> Client {
            Client(server: Server(baseURL: url), transport: transport)
        }

        static func attempts(_ error: CourierError?) -> Int {
            error?.trace.steps.map(\.attempt).max() ?? 0
        }

        @Test(
            "row 47: a refused port fails with connectionRefused in under 3 s, after 3 attempts",
            arguments: TransportKind.all)
        func refusedPort(transport: TransportKind) async throws {
            let port = try Sockets.RefusingPort()
            let client = Self.client(transport.make(), try #require(URL(string: "http://127.0.0.1:\(port.port)")))
            let start = ContinuousClock.now
            let error = await expectCourierError { try await client.send(Raw(path: "/get")) }
            let elapsed = ContinuousClock.now - start
            #expect(error?.code == .connectionRefused, "\(String(describing: error))")
            #expect(elapsed < .seconds(3), "took \(elapsed)")
            #expect(Self.attempts(error) == 3)
            #expect(
                error.map { ErrorMessageProvider().message(for: $0) }
                    == "The server isn't answering right now, so please try again later.")
            print("conformance: \(transport.name) · refused port: \(error?.code.description ?? "-") in \(elapsed)")
        }

        @Test(
            "a POST to a refused port is retried like a GET (nothing was sent); a POST the server received is not",
            arguments: TransportKind.all)
        func unsentPostIsRetried(transport: TransportKind) async throws {
            let port = try Sockets.RefusingPort()
            let refused = Self.client(transport.make(), try #require(URL(string: "http://127.0.0.1:\(port.port)")))
            let post = Raw(
                method: .post, path: "/post", body: .json(["a": 1]), retryPolicy: RetryPolicy(backoff: .none))
            let error = await expectCourierError { try await refused.send(post) }
            #expect(error?.code == .connectionRefused, "\(String(describing: error))")
            #expect(error?.isKnownUnsent == true)
            #expect(Self.attempts(error) == 3)

            // The same POST on a connection the server accepted and then reset: it may have been processed, so it is
            // sent once.
            try await withTestServer { server in
                let client = Self.client(transport.make(), server.baseURL)
                var reset = post
                reset.path = "/fault/reset-on-request"
                let lost = await expectCourierError { try await client.send(reset) }
                #expect(lost?.code == .connectionReset, "\(String(describing: lost))")
                #expect(lost?.isKnownUnsent == false)
                #expect(server.requestCount == 1)
                #expect(Self.attempts(lost) == 1)
            }
        }

        @Test(
            "row 23: a connect that never completes fails with connectTimeout at the connect timeout",
            arguments: TransportKind.all)
        func connectTimeout(transport: TransportKind) async throws {
            guard let blackhole = try Sockets.BlackholePort() else {
                print("conformance: \(transport.name) · connect timeout: skipped (this kernel answers a full backlog)")
                return
            }
            let url = try #require(URL(string: "http://127.0.0.1:\(blackhole.port)"))
            let client = Self.client(transport.makeWithTimeouts(.seconds(1), .seconds(30)), url)
            let start = ContinuousClock.now
            let error = await expectCourierError { try await client.send(Raw(path: "/get", retryPolicy: .disabled)) }
            let elapsed = ContinuousClock.now - start
            #expect(error?.code == .connectTimeout, "\(String(describing: error))")
            // Not early; late only by the machine's scheduling (up to ~2 s seen on a loaded CI machine). A connect with no
            // timeout would wait for the kernel's SYN retries (~127 s), past the 30 s idle timeout.
            #expect(elapsed >= .milliseconds(800) && elapsed < .seconds(3), "took \(elapsed)")
            print(
                "conformance: \(transport.name) · connect timeout 1 s: \(error?.code.description ?? "-") in \(elapsed)")
        }

        @Test(
            "row 24: a server that never answers fails with idleTimeout at the idle timeout, not before",
            arguments: TransportKind.all)
        func idleTimeout(transport: TransportKind) async throws {
            try await withTestServer { server in
                let client = Self.client(transport.makeWithTimeouts(.seconds(10), .seconds(1)), server.baseURL)
                let start = ContinuousClock.now
                let error = await expectCourierError { try await client.send(Raw(path: "/fault/never-answer")) }
                let elapsed = ContinuousClock.now - start
                #expect(error?.code == .idleTimeout, "\(String(describing: error))")
                // The timer fires at 1 s (1.001-1.003 s measured here, printed below); the upper bound leaves room for a
                // loaded CI machine's scheduling (~2 s seen), and a missing idle timer still fails it: the next timer
                // is the 10 s connect timeout.
                #expect(elapsed >= .milliseconds(800) && elapsed < .seconds(3), "took \(elapsed)")
                // An idle timeout is not retried: the server accepted the request and went silent.
                #expect(server.requestCount == 1)
                print(
                    "conformance: \(transport.name) · never answers, idle 1 s: \(error?.code.description ?? "-") in \(elapsed)"
                )
            }
        }

        @Test(
            "a connected server silent past the connect timeout is an idle timeout, not a connect timeout",
            arguments: TransportKind.all)
        func slowServerIsNotUnreachable(transport: TransportKind) async throws {
            try await withTestServer { server in
                // URLSession reports no "connected" event: without its connect probe this fired at 0.5 s.
                let slow = Self.client(
                    transport.makeWithTimeouts(.milliseconds(500), .milliseconds(1500)), server.baseURL)
                let start = ContinuousClock.now
                let error = await expectCourierError { try await slow.send(Raw(path: "/fault/never-answer")) }
                let elapsed = ContinuousClock.now - start
                #expect(error?.code == .idleTimeout, "\(String(describing: error))")
                #expect(elapsed >= .milliseconds(1200), "took \(elapsed)")
            }
        }

        @Test(
            "row 24: a server silent after the head fails with idleTimeout; a drip is ended by the deadline",
            arguments: TransportKind.all)
        func idleAfterHeadAndDrip(transport: TransportKind) async throws {
            try await withTestServer { server in
                let client = Self.client(transport.makeWithTimeouts(.seconds(10), .seconds(1)), server.baseURL)
                let stalled = await expectCourierError {
                    try await client.send(Raw(path: "/fault/stall-after-headers"))
                }
                #expect(stalled?.code == .idleTimeout, "\(String(describing: stalled))")
                let start = ContinuousClock.now
                let drip = Raw(
                    path: "/fault/drip", query: ["bytes": 100, "interval_ms": 100], timeout: .milliseconds(700))
                let dripError = await expectCourierError { try await client.send(drip) }
                #expect(dripError?.code == .timedOut, "\(String(describing: dripError))")
                #expect(ContinuousClock.now - start < .seconds(5), "the drip lasts 10 s")
            }
        }

        @Test(
            "row 48: .retry(2) on a 503 GET sends exactly 3 requests, and the trace says 3",
            arguments: TransportKind.all)
        func requestRetryReplacesClientPolicy(transport: TransportKind) async throws {
            try await withTestServer { server in
                let client = Self.client(transport.make(), server.baseURL)
                let error = await expectCourierError {
                    try await client.send(Raw(path: "/status/503", decisionList: [.retry(2), .validateStatus()]))
                }
                #expect(error?.code == .unacceptableStatus)
                #expect(server.requestCount == 3)
                #expect(Self.attempts(error) == 3)
            }
        }

        @Test(
            "a connection closed or reset before any response is connectionReset on every transport: a GET is retried",
            arguments: TransportKind.all, ["/fault/close-on-request", "/fault/reset-on-request"])
        func noResponse(transport: TransportKind, path: String) async throws {
            try await withTestServer { server in
                let client = Self.client(transport.make(), server.baseURL)
                let error = await expectCourierError {
                    try await client.send(Raw(path: path, retryPolicy: RetryPolicy(backoff: .none)))
                }
                #expect(error?.code == .connectionReset, "\(String(describing: error))")
                #expect(server.requestCount == 3)
                #expect(Self.attempts(error) == 3)
            }
        }

        @Test(
            "a request offers only the codings its transport decodes: a server that picks one is always readable",
            arguments: TransportKind.all)
        func offeredCodings(transport: TransportKind) async throws {
            try await withTestServer { server in
                // Answers with the first coding offered that no Courier transport decodes on Linux, as a CDN
                // negotiating brotli or zstd does; the body is not valid in that coding either way.
                server.register("GET", "/negotiated") { request in
                    let offered = (request.header("Accept-Encoding") ?? "").split(separator: ",").map {
                        $0.split(separator: ";")[0].trimmingCharacters(in: .whitespaces).lowercased()
                    }
                    if let coding = offered.first(where: { ["br", "zstd", "compress"].contains($0) }) {
                        return TestServerResponse(headers: [("Content-Encoding", coding)], body: Array("xyz".utf8))
                    }
                    return TestServerResponse(body: Array("plain".utf8))
                }
                let client = Self.client(transport.make(), server.baseURL)
                let body = try await client.send(Raw(path: "/negotiated"))
                #expect(String(decoding: body, as: UTF8.self) == "plain")
            }
        }

        @Test(
            "row 21: truncation is truncatedResponse on every transport; a GET is retried, a POST is not",
            arguments: TransportKind.all,
            ["/fault/truncate", "/fault/truncate-unclean", "/fault/reset-mid-body", "/fault/chunked-truncated"]
        )
        func truncation(transport: TransportKind, path: String) async throws {
            try await withTestServer { server in
                let client = Self.client(transport.make(), server.baseURL)
                let query: Parameters = ["announce": 100, "send": 9]
                let get = await expectCourierError {
                    try await client.send(Raw(path: path, query: query, retryPolicy: RetryPolicy(backoff: .none)))
                }
                #expect(get?.code == .truncatedResponse, "\(String(describing: get))")
                #expect(server.requestCount == 3)
                #expect(Self.attempts(get) == 3)
                let post = await expectCourierError {
                    try await client.send(Raw(method: .post, path: path, query: query, body: .text("x")))
                }
                #expect(post?.code == .truncatedResponse, "\(String(describing: post))")
                #expect(server.requestCount == 4)
            }
        }

        @Test(
            "row 26: a reset mid-body is typed, its cacheable partial body never stored or served",
            arguments: TransportKind.all)
        func resetMidBodyNotCached(transport: TransportKind) async throws {
            try await withTestServer { server in
                let client = makeClient(transport, server.baseURL) { $0.cache = .memory() }
                let request = Raw(
                    path: "/fault/reset-mid-body", query: ["announce": 100, "send": 9, "max_age": 60],
                    retryPolicy: .disabled)
                for round in 1...2 {
                    let error = await expectCourierError { try await client.send(request) }
                    #expect(error?.code == .truncatedResponse, "\(String(describing: error))")
                    #expect(server.requestCount == round, "round \(round): served from the cache?")
                }
            }
        }

        @Test(
            "row 22: Content-Length together with chunked is malformedResponse on every transport",
            arguments: TransportKind.all)
        func contentLengthAndChunked(transport: TransportKind) async throws {
            try await withTestServer { server in
                let client = Self.client(transport.make(), server.baseURL)
                let error = await expectCourierError {
                    try await client.send(Raw(path: "/fault/content-length-and-chunked"))
                }
                #expect(error?.code == .malformedResponse, "\(String(describing: error))")
                #expect(server.requestCount == 1)
                let next = try await client.send(Raw(path: "/bytes/10"))
                #expect(next.count == 10)
            }
        }

        @Test(
            "row 18: stacked and unknown content codings are unsupported on every transport",
            arguments: TransportKind.all)
        func codings(transport: TransportKind) async throws {
            try await withTestServer { server in
                server.register("GET", "/unknown-coding") { _ in
                    TestServerResponse(headers: [("Content-Encoding", "x-custom")], body: Array("abc".utf8))
                }
                let client = Self.client(transport.make(), server.baseURL)
                for path in ["/fault/stacked-encodings", "/unknown-coding"] {
                    let error = await expectCourierError { try await client.send(Raw(path: path)) }
                    #expect(error?.code == .unsupported, "\(path): \(String(describing: error))")
                }
                let single = try await client.send(Raw(path: "/gzip"))
                #expect(!single.isEmpty)
            }
        }

        @Test(
            "row 18: a coding the transport does not decode is unsupported, never the compressed bytes as the body",
            arguments: TransportKind.all)
        func undecodedCoding(transport: TransportKind) async throws {
            struct Gzipped: Decodable, Sendable { let gzipped: Bool }
            struct Call: Request {
                typealias Response = Data
                var path: String { "/gzip" }
                var coding: String
                var query: Parameters? { ["coding": coding] }
            }
            try await withTestServer { server in
                let client = Self.client(transport.make(), server.baseURL)
                // NIO decodes a coding only when it is the first one listed and named `gzip` or `deflate`;
                // libcurl also knows `x-gzip` and skips `identity`.
                for coding in ["x-gzip", "identity, gzip"] {
                    do {
                        let body = try await client.send(Call(coding: coding))
                        #expect(transport == .urlSession, "\(coding): decoded on \(transport.name)")
                        let value = try JSONDecoder().decode(Gzipped.self, from: body)
                        #expect(value.gzipped, "\(coding)")
                    } catch let error as CourierError {
                        #expect(transport == .asyncHTTPClient, "\(coding): \(error)")
                        #expect(error.code == .unsupported, "\(coding): \(error)")
                        #expect(error.message?.contains("\"\(coding)\"") == true, "\(coding): \(error)")
                    }
                }
            }
        }

        @Test(
            "row 18: a corrupt or cut gzip body is a malformed response, not a decompression limit, and not retried",
            arguments: TransportKind.all)
        func corruptCoding(transport: TransportKind) async throws {
            try await withTestServer { server in
                let client = Self.client(transport.make(), server.baseURL)
                let corrupt = Raw(path: "/fault/corrupt-gzip")
                var error = await expectCourierError { try await client.send(corrupt) }
                #expect(error?.code == .malformedResponse, "\(String(describing: error))")
                #expect(server.requestCount == 1)

                let cut = Raw(path: "/fault/corrupt-gzip", query: ["cut": 1])
                guard transport == .asyncHTTPClient else {
                    // libcurl hands over what it inflated when a correctly framed body ends inside the gzip stream,
                    // and FoundationNetworking reports success: URLSession on Linux cannot tell.
                    await withKnownIssue("URLSession on Linux does not detect a gzip stream cut short") {
                        error = await expectCourierError { try await client.send(cut) }
                        #expect(error?.code == .malformedResponse)
                    }
                    return
                }
                error = await expectCourierError { try await client.send(cut) }
                #expect(error?.code == .malformedResponse, "\(String(describing: error))")
                #expect(server.requestCount == 2)
            }
        }

        @Test(
            "row 18: an empty body labelled gzip (Content-Length: 0) is an empty body, not a cut gzip stream",
            arguments: TransportKind.all)
        func emptyGzipBody(transport: TransportKind) async throws {
            try await withTestServer { server in
                let client = Self.client(transport.make(), server.baseURL)
                let get = try await client.send(Raw(path: "/fault/empty-gzip"))
                let head = try await client.send(Raw(method: .head, path: "/fault/empty-gzip"))
                let noContent = try await client.send(Raw(path: "/fault/empty-gzip", query: ["status": 204]))
                #expect(get.isEmpty && head.isEmpty && noContent.isEmpty)
                #expect(server.requestCount == 3, "each sent once, none retried")
            }
        }

        @Test(
            "row 18: an empty or identity Content-Encoding is no coding: the body keeps its known length",
            arguments: TransportKind.all)
        func noCoding(transport: TransportKind) async throws {
            struct Live: Request {
                typealias Response = LiveResponse
                var path: String
            }
            try await withTestServer { server in
                for (route, coding) in [("/empty-coding", ""), ("/identity-coding", "identity")] {
                    server.register("GET", route) { _ in
                        TestServerResponse(headers: [("Content-Encoding", coding)], body: Array("abc".utf8))
                    }
                }
                let client = Self.client(transport.make(), server.baseURL)
                for path in ["/empty-coding", "/identity-coding"] {
                    let live = try await client.send(Live(path: path))
                    #expect(live.length == .known(3), "\(path)")
                    var text = ""
                    for try await chunk in live { text += String(decoding: chunk, as: UTF8.self) }
                    #expect(text == "abc", "\(path)")
                }
            }
        }

        @Test(
            "row 18: a gzip bomb under the body limit stops at the decompression limit, in memory and to a file",
            arguments: TransportKind.all)
        func gzipBomb(transport: TransportKind) async throws {
            struct Download: Request {
                typealias Response = DownloadedFile
                let destination: URL
                var path: String { "/fault/gzip-bomb" }
                var query: Parameters? { ["size": 209_715_200] }
                var parser: any ResponseParser<DownloadedFile> { DownloadParser(destination: destination) }
            }
            try await withTestServer { server in
                let client = Self.client(transport.make(), server.baseURL)
                // 8 MiB inflated is under the 10 MiB body limit: only the ratio limit can stop it.
                let error = await expectCourierError {
                    try await client.send(Raw(path: "/fault/gzip-bomb", query: ["size": 8_388_608]))
                }
                #expect(error?.code == .decompressionLimit, "\(String(describing: error))")
                let destination = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID())")
                defer { try? FileManager.default.removeItem(at: destination) }
                let download = await expectCourierError { try await client.send(Download(destination: destination)) }
                #expect(download?.code == .decompressionLimit, "\(String(describing: download))")
                let size = (try? FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? NSNumber)
                #expect((size?.intValue ?? 0) < 50 * 1024 * 1024)
            }
        }

        @Test(
            "row 25: a reused connection reset by the server: GET resent once on a fresh one, POST and PATCH never replayed",
            arguments: TransportKind.all)
        func staleConnection(transport: TransportKind) async throws {
            try await withTestServer { server in
                let client = Self.client(transport.make(), server.baseURL)
                _ = try await client.send(Raw(path: "/fault/reset-if-reused"))
                #expect(server.requestCount == 1)
                // A GET on a reused connection is reset and resent once on a fresh one, so the server sees it
                // twice and the call succeeds. Whether the client reuses the connection at once is its pool's
                // timing (below), so: GETs until one is resent (at most 5), each seen once or twice, never more.
                var resent = false
                var gets = 0
                while !resent, gets < 5 {
                    gets += 1
                    let before = server.requestCount
                    _ = try await client.send(Raw(path: "/fault/reset-if-reused"))
                    let seen = server.requestCount - before
                    #expect((1...2).contains(seen), "GET \(gets) was seen \(seen) times")
                    resent = seen == 2
                }
                #expect(resent, "no GET of \(gets) went out on a reused connection")
                // A POST or PATCH is never sent twice: not by Courier's retry decision, and not by the transport on
                // a fresh connection after a reused one was reset (libcurl does that by itself: in full when there is
                // no body, every time). Each round leaves a remembered connection idle (a GET), then sends one, with
                // and without a body: the server sees it exactly once, and it either succeeds (it went out on a fresh
                // connection) or fails with connectionReset (on the remembered one).
                var resets = 0
                for round in 0..<12 {
                    _ = try await client.send(Raw(path: "/fault/reset-if-reused"))
                    let method: HTTPRequest.Method = round.isMultiple(of: 2) ? .post : .patch
                    let body: RequestBody? = round % 4 < 2 ? nil : .text("once")
                    let before = server.requestCount
                    do {
                        _ = try await client.send(Raw(method: method, path: "/fault/reset-if-reused", body: body))
                    } catch let error as CourierError {
                        resets += 1
                        #expect(error.code == .connectionReset, "\(method) \(round): \(error)")
                    }
                    let seen = server.requestCount - before
                    #expect(seen == 1, "\(method) \(round) (with a body: \(body != nil)) was seen \(seen) times")
                }
                if transport == .asyncHTTPClient {
                    // It sends them on its pooled connections, so some meet the remembered one.
                    #expect(resets > 0, "no POST or PATCH of 12 went out on a reused connection")
                }
            }
        }

        @Test(
            "row 30: cancelling after the body started returns promptly and sends nothing more",
            arguments: TransportKind.all)
        func cancelMidBody(transport: TransportKind) async throws {
            struct Download: Request {
                typealias Response = DownloadedFile
                let destination: URL
                var path: String { "/fault/drip" }
                var query: Parameters? { ["bytes": 100_000, "interval_ms": 20] }
                var parser: any ResponseParser<DownloadedFile> { DownloadParser(destination: destination) }
            }
            try await withTestServer { server in
                let client = Self.client(transport.make(), server.baseURL)
                let destination = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID())")
                defer { try? FileManager.default.removeItem(at: destination) }
                let transfer = client.transfer(Download(destination: destination))
                // Wait for the first body byte: the transport has started the body.
                for await step in transfer.progress where step.direction == .download && step.completedBytes > 0 {
                    break
                }
                let start = ContinuousClock.now
                transfer.cancel()
                await #expect(throws: CancellationError.self) { try await transfer.value }
                #expect(ContinuousClock.now - start < .seconds(3), "the drip lasts far longer")
                #expect(server.requestCount == 1)
            }
        }
    }
}
