import Courier
import CourierTestServer
import Foundation
import Testing

/// HTTP/2 over TLS through Courier, and connection reuse across TLS options (row 44).
extension Conformance.TLSConformanceTests {
    @Test("h2: 100 concurrent calls through one client share one connection", arguments: TransportKind.all)
    func hundredConcurrentCalls(transport: TransportKind) async throws {
        let authority = try TLSLab.authority.get()
        try await withTLSServer(TestServerTLS(authority: authority)) { server in
            try await tlsCase("h2: 100 concurrent GETs", on: transport, needs: [.customTrust]) {
                let client = tlsClient(transport.make(), server.baseURL, try TLSLab.trusting(authority))
                _ = try await client.send(HTTPSCall<Echo>(path: "/get", query: ["warm": "up"]))
                let echoed = try await withThrowingTaskGroup(of: String?.self) { group in
                    for index in 0..<100 {
                        group.addTask {
                            try await client.send(HTTPSCall<Echo>(path: "/get", query: ["i": index])).args["i"]
                        }
                    }
                    return try await group.reduce(into: Set<String>()) { if let index = $1 { $0.insert(index) } }
                }
                #expect(echoed == Set((0..<100).map(String.init)))
                #expect(server.requestCount == 101)
                #expect(server.connectionCount == 1)
                #expect(server.negotiatedProtocols == [.http2])
                return "ok (\(server.connectionCount) connection)"
            }
        }
    }

    @Test(
        "h2: 40 concurrent calls to a server that allows 4 streams at once all succeed, each sent once",
        arguments: TransportKind.all)
    func maxConcurrentStreamsReached(transport: TransportKind) async throws {
        let authority = try TLSLab.authority.get()
        var tls = TestServerTLS(authority: authority)
        tls.maxConcurrentStreams = 4
        try await withTLSServer(tls) { server in
            try await tlsCase("h2: 40 calls, 4 streams at once", on: transport, needs: [.customTrust]) {
                let client = tlsClient(transport.make(), server.baseURL, try TLSLab.trusting(authority))
                _ = try await client.send(HTTPSCall<Echo>(path: "/get", query: ["warm": "up"]))
                // Each holds its stream for 200 ms: 40 at once are far past the server's 4.
                let echoed = try await withThrowingTaskGroup(of: String?.self) { group in
                    for index in 0..<40 {
                        group.addTask {
                            try await client.send(HTTPSCall<Echo>(path: "/delay/0.2", query: ["i": index])).args["i"]
                        }
                    }
                    return try await group.reduce(into: Set<String>()) { if let index = $1 { $0.insert(index) } }
                }
                #expect(echoed == Set((0..<40).map(String.init)))
                #expect(server.requestCount == 41, "no call was refused and sent again, none lost")
                #expect(server.negotiatedProtocols.contains(.http2))
                return "ok (\(server.connectionCount) connection(s))"
            }
        }
    }

    @Test(
        "h2: one call cancelled mid-stream while 10 others complete on the same connection",
        arguments: TransportKind.all)
    func cancelOneStream(transport: TransportKind) async throws {
        let authority = try TLSLab.authority.get()
        try await withTLSServer(TestServerTLS(authority: authority)) { server in
            try await tlsCase("h2: cancel one stream of 11", on: transport, needs: [.customTrust]) {
                let client = tlsClient(transport.make(), server.baseURL, try TLSLab.trusting(authority))
                _ = try await client.send(HTTPSCall<Echo>(path: "/get", query: ["warm": "up"]))
                let drip = client.transfer(HTTPSBytes(path: "/drip", query: ["duration": 5, "numbytes": 50]))
                async let others = withThrowingTaskGroup(of: Int.self) { group in
                    for index in 0..<10 {
                        group.addTask { try await client.send(HTTPSBytes(path: "/bytes/\(index + 1)")).count }
                    }
                    return try await group.reduce(0, +)
                }
                // The first body byte has arrived: the stream is mid-body.
                for await step in drip.progress where step.direction == .download && step.completedBytes > 0 {
                    break
                }
                let start = ContinuousClock.now
                drip.cancel()
                await #expect(throws: CancellationError.self) { try await drip.value }
                let cancelled = ContinuousClock.now - start
                #expect(cancelled < .seconds(3), "cancel took \(cancelled)")
                #expect(try await others == (1...10).reduce(0, +))
                // Cancelling resets the stream, not the connection: the next call still shares it.
                _ = try await client.send(HTTPSCall<Echo>(path: "/get", query: ["after": "cancel"]))
                #expect(server.connectionCount == 1)
                #expect(server.negotiatedProtocols == [.http2])
                return "CancellationError in \(cancelled), others ok"
            }
        }
    }

    @Test(
        "h2: a GET on an HTTP/2 connection the server resets when reused is resent once on a new one",
        arguments: TransportKind.all)
    func staleHTTP2Connection(transport: TransportKind) async throws {
        let authority = try TLSLab.authority.get()
        try await withTLSServer(TestServerTLS(authority: authority)) { server in
            try await tlsCase("h2: reset when reused", on: transport, needs: [.customTrust]) {
                let client = tlsClient(transport.make(), server.baseURL, try TLSLab.trusting(authority))
                _ = try await client.send(HTTPSCall<[String: String]>(path: "/fault/reset-if-reused"))
                // The test server's fault keyed on the stream before: every request on an HTTP/2 connection was
                // "new", and this GET succeeded on the first connection without testing anything.
                _ = try await client.send(HTTPSCall<[String: String]>(path: "/fault/reset-if-reused"))
                #expect(server.requestCount == 3, "the second GET, reset, then resent")
                #expect(server.negotiatedProtocols.filter { $0 == .http2 }.count == 2)
                return "ok (\(server.connectionCount) connections)"
            }
        }
    }

    @Test("h2: httpVersions .http1Only offers only http/1.1 to an h2 server", arguments: TransportKind.all)
    func http1Only(transport: TransportKind) async throws {
        let authority = try TLSLab.authority.get()
        try await withTLSServer(TestServerTLS(authority: authority)) { server in
            try await tlsCase("http1Only vs an h2 server", on: transport, needs: [.customTrust, .httpVersionChoice]) {
                var tls = try TLSLab.trusting(authority)
                tls.httpVersions = .http1Only
                let client = tlsClient(transport.make(), server.baseURL, tls)
                for index in 0..<3 {
                    _ = try await client.send(HTTPSCall<Echo>(path: "/get", query: ["i": index]))
                }
                #expect(server.negotiatedProtocols == [.http1])
                return "ok (\(server.negotiatedProtocols.map(\.rawValue).joined(separator: ", ")))"
            }
        }
    }

    @Test(
        "row 44: a relaxed connection is never reused by a strict call to the same origin, per client or request",
        arguments: TransportKind.all)
    func noReuseAcrossTLSOptions(transport: TransportKind) async throws {
        let authority = try TLSLab.authority.get()
        try await withTLSServer(TestServerTLS(authority: authority, mode: .selfSigned)) { server in
            try await tlsCase("relaxed then strict, same origin", on: transport, needs: [.insecureLoopback]) {
                // One transport, so one connection pool, shared by both clients.
                let shared = transport.make()
                let relaxedServer = Server(baseURL: server.baseURL, tls: TLSOptions(allowsInsecureLoopback: true))
                let relaxed = Client(server: relaxedServer, transport: shared)
                let strict = Client(server: Server(baseURL: server.baseURL), transport: shared)
                let echo = try await relaxed.send(HTTPSCall<Echo>(path: "/get", query: ["tls": "relaxed"]))
                #expect(echo.args == ["tls": "relaxed"])
                #expect(server.requestCount == 1)
                let error = try await expectTLSFailure { try await strict.send(HTTPSBytes(path: "/get")) }
                #expect(error?.code == .untrustedCertificate, "\(String(describing: error))")
                #expect(server.requestCount == 1, "the strict call reached the server")
                // Per request: the relaxed server on the strict client, through a redirect, keeps its options...
                let redirected = try await strict.send(HTTPSCall<Echo>(path: "/redirect/1", server: relaxedServer))
                #expect(redirected.url.hasSuffix("/get"))
                #expect(server.requestCount == 3)
                // ...and the strict client's next call is strict again.
                let again = try await expectTLSFailure { try await strict.send(HTTPSBytes(path: "/get")) }
                #expect(again?.code == .untrustedCertificate, "\(String(describing: again))")
                #expect(server.requestCount == 3)
                return error?.code.description ?? "-"
            }
        }
    }
}
