import Courier
import CourierTestServer
import Foundation
import HTTPTypes
import Testing

/// HTTP/2 frames a client must survive through Courier: `GOAWAY`, `RST_STREAM`, trailers; and the authority it sends.
extension Conformance.TLSConformanceTests {
    @Test(
        "h2 GOAWAY after 5 streams: 20 sequential then 20 concurrent calls all succeed, each served once",
        arguments: TransportKind.all)
    func goAwayAfterStreams(transport: TransportKind) async throws {
        let authority = try TLSLab.authority.get()
        try await withTLSServer(TestServerTLS(authority: authority, goAway: .afterStreams(5))) { server in
            try await tlsCase("h2: GOAWAY after 5 streams, 20 + 20 calls", on: transport, needs: [.customTrust]) {
                let client = tlsClient(transport.make(), server.baseURL, try TLSLab.trusting(authority))
                for index in 0..<20 {
                    let echo = try await client.send(HTTPSCall<Echo>(path: "/get", query: ["i": index]))
                    #expect(echo.args["i"] == String(index))
                }
                // The GOAWAY goes out as a connection's 5th stream arrives, before its response: a client that waits
                // for each response opens the next stream on a new connection, and none is refused.
                #expect(server.requestCount == 20)
                #expect(server.connectionCount == 4)
                // Concurrent calls race the GOAWAY: streams the client opened before it arrived are refused, never
                // processed, and must be sent again on another connection. Each refusal spends a retry: in lockstep,
                // 20 calls against 5 streams per connection need 3, one more than the default policy's 2 (with it,
                // a call fails now and then with connectionReset). Under a loaded machine (the whole suite in
                // parallel) one call once lost 5 races in a row, so the budget is 8.
                var configuration = Client.Configuration()
                configuration.tls = try TLSLab.trusting(authority)
                configuration.retryPolicy = RetryPolicy(maxRetries: 8, backoff: .none)
                let burst = Client(
                    server: Server(baseURL: server.baseURL), transport: transport.make(), configuration: configuration)
                let echoed = try await withThrowingTaskGroup(of: String?.self) { group in
                    for index in 0..<20 {
                        group.addTask {
                            try await burst.send(HTTPSCall<Echo>(path: "/get", query: ["j": index])).args["j"]
                        }
                    }
                    return try await group.reduce(into: Set<String>()) { if let index = $1 { $0.insert(index) } }
                }
                #expect(echoed == Set((0..<20).map(String.init)))
                // Every call succeeds. Amid the GOAWAYs AsyncHTTPClient now and then gives up a stream whose response
                // it had not read (HTTPClientError.cancelled, though nobody cancelled): Courier reports that as a
                // lost connection, so these GETs are sent again (RFC 9110 §9.2.2), and the server may have served a
                // few twice. Refused streams are never served (the next test), and a POST is never resent.
                #expect(server.requestCount >= 40, "a call was lost")
                #expect(server.connectionCount >= 8, "each connection serves at most 5 streams")
                #expect(server.negotiatedProtocols.prefix(4) == [.http2, .http2, .http2, .http2])
                let spoken = server.negotiatedProtocols.map(\.rawValue)
                return "ok (\(server.requestCount - 20) requests for 20 calls, \(server.connectionCount) connections: "
                    + "\(spoken.joined(separator: " ")))"
            }
        }
    }

    @Test(
        "h2 GOAWAY refusing a stream in flight: the call is sent again on a new connection, never processed twice",
        arguments: TransportKind.all)
    func goAwayRefusesAStreamInFlight(transport: TransportKind) async throws {
        let authority = try TLSLab.authority.get()
        // Each connection serves one stream; its second, already sent, is refused by a GOAWAY naming the first.
        try await withTLSServer(TestServerTLS(authority: authority, goAway: .refusingStream(2))) { server in
            try await tlsCase("h2: GOAWAY refuses the stream in flight", on: transport, needs: [.customTrust]) {
                let client = tlsClient(transport.make(), server.baseURL, try TLSLab.trusting(authority))
                _ = try await client.send(HTTPSCall<Echo>(path: "/get", query: ["i": 0]))
                let echo = try await client.send(HTTPSCall<Echo>(path: "/get", query: ["i": 1]))
                #expect(echo.args["i"] == "1")
                #expect(server.requestCount == 2, "the refused attempt reached a route")
                #expect(server.connectionCount == 2)
                // A POST with an idempotency key is retried like a GET.
                let keyed = HTTPBinCall<Echo>(
                    method: .post, path: "/post", headers: ["Idempotency-Key": "k-1"], body: .text("keyed"))
                #expect(try await client.send(keyed).data == "keyed")
                #expect(server.requestCount == 3)
                #expect(server.connectionCount == 3)
                // Any method is safe to send again here: the server provably did not process the request.
                await withKnownIssue("Courier's RetryDecision retries a refused stream for idempotent methods only") {
                    let post = try await client.send(
                        HTTPBinCall<Echo>(method: .post, path: "/post", body: .text("once")))
                    #expect(post.data == "once")
                }
                #expect(server.requestCount <= 4, "the refused POST was processed")
                #expect(server.negotiatedProtocols.allSatisfy { $0 == .http2 })
                return "ok (\(server.connectionCount) connections, \(server.requestCount) requests)"
            }
        }
    }

    @Test(
        "h2 RST_STREAM: the reset call fails typed while 10 other streams complete on the same connection",
        arguments: TransportKind.all, ["refused_stream", "internal_error"])
    func streamReset(transport: TransportKind, code: String) async throws {
        let authority = try TLSLab.authority.get()
        try await withTLSServer(TestServerTLS(authority: authority)) { server in
            try await tlsCase("h2: RST_STREAM \(code)", on: transport, needs: [.customTrust]) {
                // One transport, so one connection, for a client that retries and one that does not.
                let shared = transport.make()
                var configuration = Client.Configuration()
                configuration.tls = try TLSLab.trusting(authority)
                let retrying = Client(
                    server: Server(baseURL: server.baseURL), transport: shared, configuration: configuration)
                configuration.retryPolicy = .disabled
                let once = Client(
                    server: Server(baseURL: server.baseURL), transport: shared, configuration: configuration)
                _ = try await once.send(HTTPSCall<Echo>(path: "/get", query: ["warm": "up"]))
                async let others = withThrowingTaskGroup(of: Int.self) { group in
                    for index in 0..<10 {
                        group.addTask { try await once.send(HTTPSBytes(path: "/bytes/\(index + 1)")).count }
                    }
                    return try await group.reduce(0, +)
                }
                let beforeHead = try await expectTLSFailure {
                    try await once.send(HTTPSBytes(path: "/fault/reset-stream", query: ["code": code]))
                }
                #expect(beforeHead?.code == .connectionReset, "\(String(describing: beforeHead))")
                let midBody = try await expectTLSFailure {
                    try await once.send(
                        HTTPSBytes(path: "/fault/reset-stream", query: ["code": code, "announce": 100, "send": 9]))
                }
                #expect(midBody?.code == .truncatedResponse, "\(String(describing: midBody))")
                #expect(try await others == (1...10).reduce(0, +))
                // The resets ended streams, not the connection.
                _ = try await once.send(HTTPSCall<Echo>(path: "/get", query: ["after": "reset"]))
                #expect(server.connectionCount == 1)
                // Reset before any response, an idempotent call is retried by the default policy (and reset again).
                let retried = try await expectTLSFailure {
                    try await retrying.send(HTTPSBytes(path: "/fault/reset-stream", query: ["code": code]))
                }
                #expect(retried?.code == .connectionReset)
                #expect(attempts(retried) == 3)
                #expect(server.requestCount == 1 + 10 + 2 + 1 + 3)
                let codes = [beforeHead, midBody, retried].map { $0?.code.description ?? "-" }
                return "\(codes.joined(separator: " / ")), others ok, \(server.connectionCount) connections in all"
            }
        }
    }

    @Test(
        "trailers after a chunked body (h2: a trailing HEADERS frame) are ignored: the body arrives intact",
        arguments: TransportKind.all, [TLSTarget.embeddedHTTP2, .embeddedHTTP1])
    func trailersOverHTTPS(transport: TransportKind, target: TLSTarget) async throws {
        _ = try await target.run(on: transport, "trailers") { baseURL, tls, server in
            try await tlsCase("trailers (\(target.name))", on: transport, needs: [.customTrust]) {
                let client = tlsClient(transport.make(), baseURL, tls)
                try await Self.expectBodiesBeforeTrailers(client)
                #expect(server?.negotiatedProtocols == target.protocols.map { [$0[0]] })
                return "ok"
            }
        }
    }

    @Test("trailers after a chunked body over plain HTTP/1.1 are ignored", arguments: TransportKind.all)
    func trailersOverPlainHTTP(transport: TransportKind) async throws {
        #if canImport(FoundationNetworking)
            if transport == .urlSession {
                // Not a declared gap Courier could refuse: the process dies, so the case cannot even run.
                print(
                    "conformance: URLSession · trailers (plain http/1.1): skipped (FoundationNetworking traps, "
                        + "\"Transfer completed, but there's no response\", on a chunked response with trailers)")
                return
            }
        #endif
        try await withTestServer { server in
            try await tlsCase("trailers (plain http/1.1)", on: transport, needs: []) {
                let client = Client(server: Server(baseURL: server.baseURL), transport: transport.make())
                try await Self.expectBodiesBeforeTrailers(client)
                return "ok"
            }
        }
    }

    /// Sends `/trailers/{n}` for small and large bodies with one and many trailer fields, and expects each body
    /// exactly.
    static func expectBodiesBeforeTrailers(_ client: Client) async throws {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz".utf8)
        for (size, fields) in [(1, 1), (100_000, 16)] {
            let body = try await client.send(HTTPSBytes(path: "/trailers/\(size)", query: ["fields": fields]))
            #expect(body == Data((0..<size).map { alphabet[$0 % 26] }), "\(size) bytes, \(fields) trailer fields")
        }
    }

    @Test(
        ":authority (h2) or Host (h1) is the URL's host:port, also after a redirect to another host",
        arguments: TransportKind.all, [TLSTarget.embeddedHTTP2, .embeddedHTTP1])
    func authority(transport: TransportKind, target: TLSTarget) async throws {
        _ = try await target.run(on: transport, "authority") { baseURL, tls, server in
            let server = try #require(server)
            try await tlsCase(":authority (\(target.name))", on: transport, needs: [.customTrust]) {
                let client = tlsClient(transport.make(), baseURL, tls)
                let direct = try await client.send(HTTPSCall<Echo>(path: "/get"))
                #expect(direct.headers["Host"] == "localhost:\(server.port)")
                let other = server.baseURL(host: "127.0.0.1").appendingPathComponent("get")
                let redirected = try await client.send(
                    HTTPSCall<Echo>(path: "/redirect-to", query: ["url": other.absoluteString]))
                #expect(redirected.headers["Host"] == "127.0.0.1:\(server.port)")
                #expect(redirected.url == other.absoluteString)
                // One connection per host.
                let spoken = try #require(target.protocols?.first)
                #expect(server.negotiatedProtocols == [spoken, spoken])
                return "ok (\(direct.headers["Host"] ?? "-"), then \(redirected.headers["Host"] ?? "-"))"
            }
        }
    }

    @Test(":authority on the default port 443 is the bare host, over h2 and http/1.1", arguments: TransportKind.all)
    func authorityOnTheDefaultPort(transport: TransportKind) async throws {
        let authority = try TLSLab.authority.get()
        let server: TestServer
        do {
            server = try await TestServer.start(port: 443, tls: TestServerTLS(authority: authority))
        } catch {
            print("conformance: \(transport.name) · :authority on port 443: skipped (cannot listen on 443: \(error))")
            return
        }
        do {
            let base = try #require(URL(string: "https://localhost"))
            try await tlsCase(":authority on port 443", on: transport, needs: [.customTrust, .httpVersionChoice]) {
                var hosts: [String] = []
                for versions in [TLSOptions.HTTPVersions.automatic, .http1Only] {
                    var tls = try TLSLab.trusting(authority)
                    tls.httpVersions = versions
                    let echo = try await tlsClient(transport.make(), base, tls).send(HTTPSCall<Echo>(path: "/get"))
                    #expect(echo.headers["Host"] == "localhost", "\(versions)")
                    #expect(echo.url == "https://localhost/get")
                    hosts.append(echo.headers["Host"] ?? "-")
                }
                #expect(server.negotiatedProtocols == [.http2, .http1])
                return "ok (\(hosts.joined(separator: ", ")))"
            }
            try await server.shutdown()
        } catch {
            try? await server.shutdown()
            throw error
        }
    }
}
