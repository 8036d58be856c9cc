import AsyncHTTPClient
import CourierTestServer
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import Testing

@Suite("TLS, HTTP/2 and bad certificates", .timeLimit(.minutes(2)))
struct TLSServerTests {
    /// One authority for the whole suite: generating keys is cheap, but sharing it also checks that it is reusable.
    static let authority = Result { try TestCertificateAuthority() }

    @Test(arguments: [
        ([TestServerTLS.ApplicationProtocol.http2, .http1], HTTPVersion.http2),
        ([.http1], .http1_1),
    ])
    func getOverHTTPSNegotiatesTheOfferedProtocol(
        offered: [TestServerTLS.ApplicationProtocol],
        expected: HTTPVersion
    ) async throws {
        let tls = try TestServerTLS(authority: Self.authority.get(), applicationProtocols: offered)
        try await withTLSServer(tls) { server, client in
            #expect(server.baseURL.absoluteString == "https://localhost:\(server.port)")
            let response = try await client.execute(
                HTTPClientRequest(url: "\(server.baseURL)/get?x=1"), timeout: .seconds(20))
            #expect(response.status == .ok)
            #expect(response.version == expected)
            let body = try await response.body.collect(upTo: 1 << 20)
            let json = try Fetched(status: 200, headers: response.headers, body: Array(body.readableBytesView)).json()
            #expect(json.string("url") == "https://localhost:\(server.port)/get?x=1")
            #expect(server.negotiatedProtocols == [expected == .http2 ? .http2 : .http1])
            #expect(server.connectionCount == 1)
            #expect(server.requestCount == 1)
        }
    }

    @Test(arguments: [TestServerTLS.ApplicationProtocol.http2, .http1])
    func routesBehaveTheSameOverBothProtocols(_ applicationProtocol: TestServerTLS.ApplicationProtocol) async throws {
        let tls = try TestServerTLS(authority: Self.authority.get(), applicationProtocols: [applicationProtocol])
        try await withTLSServer(tls) { server, client in
            let address = server.baseURL(host: "127.0.0.1")
            #expect(address.absoluteString == "https://127.0.0.1:\(server.port)")
            var post = HTTPClientRequest(url: "\(address)/post")
            post.method = .POST
            post.body = .bytes(ByteBuffer(string: "hello over TLS"))
            let echoed = try await client.collect(post)
            #expect(try echoed.json().string("data") == "hello over TLS")
            // Chunked, and larger than HTTP/2's initial flow-control window.
            let streamed = try await client.collect(HTTPClientRequest(url: "\(address)/stream-bytes/300000"))
            #expect(streamed.status == 200 && streamed.body.count == 300_000)
            var head = HTTPClientRequest(url: "\(address)/bytes/10")
            head.method = .HEAD
            let headed = try await client.collect(head)
            #expect(headed.status == 200 && headed.body.isEmpty && headed.headers["Content-Length"] == ["10"])
            let redirected = try await client.collect(HTTPClientRequest(url: "\(address)/absolute-redirect/1"))
            #expect(redirected.headers["Location"].first?.hasPrefix("https://127.0.0.1:\(server.port)/") == true)
            // Broken framing resets the HTTP/2 stream; a short body ends in a reset too.
            for fault in ["duplicate-content-length", "truncate?announce=100&send=9"] {
                await #expect(throws: (any Error).self, "\(fault)") {
                    try await client.collect(HTTPClientRequest(url: "\(address)/fault/\(fault)"))
                }
            }
            #expect(server.requestCount == 6)
            #expect(server.negotiatedProtocols.allSatisfy { $0 == applicationProtocol })
        }
    }

    @Test(arguments: [
        TestServerTLS.Mode.expired, .wrongHost, .selfSigned, .unknownCA, .missingIntermediate,
        .clientCertificateRequired, .tls11Only,
    ])
    func badModesFailTheHandshake(_ mode: TestServerTLS.Mode) async throws {
        var tls = TLSConfiguration.trusting(try Self.authority.get())
        tls.minimumTLSVersion = .tlsv12  // the default client allows TLS 1.0, which .tls11Only must not satisfy
        let serverTLS = try TestServerTLS(authority: Self.authority.get(), mode: mode)
        try await withTLSServer(serverTLS, client: tls, failFast: true) { server, client in
            // Each fails for its own reason: CERTIFICATE_VERIFY_FAILED, a hostname mismatch, a protocol-version
            // alert, or (TLS 1.3, no client certificate) the server closing after the client's Finished.
            await #expect(throws: (any Error).self) {
                try await client.collect(HTTPClientRequest(url: "\(server.baseURL)/get"))
            }
            #expect(server.requestCount == 0)
        }
    }

    @Test func tls11OnlyReallySpeaksTLS11() async throws {
        var tls = TLSConfiguration.trusting(try Self.authority.get())
        tls.minimumTLSVersion = .tlsv11
        tls.maximumTLSVersion = .tlsv11
        let serverTLS = try TestServerTLS(
            authority: Self.authority.get(), mode: .tls11Only, applicationProtocols: [.http1])
        try await withTLSServer(serverTLS, client: tls) { server, client in
            let response = try await client.collect(HTTPClientRequest(url: "\(server.baseURL)/get"))
            #expect(response.status == 200)
        }
    }

    @Test(arguments: [true, false])
    func clientCertificateRequiredChecksTheClient(presentingCertificate: Bool) async throws {
        let authority = try Self.authority.get()
        var tls = TLSConfiguration.trusting(authority)
        if presentingCertificate {
            tls.certificateChain = try NIOSSLCertificate.fromPEMBytes(Array(authority.clientCertificate.chainPEM.utf8))
                .map { .certificate($0) }
            tls.privateKey = .privateKey(
                try NIOSSLPrivateKey(bytes: Array(authority.clientCertificate.privateKeyPEM.utf8), format: .pem))
        }
        let serverTLS = TestServerTLS(authority: authority, mode: .clientCertificateRequired)
        try await withTLSServer(serverTLS, client: tls, failFast: !presentingCertificate) { server, client in
            let request = HTTPClientRequest(url: "\(server.baseURL)/get")
            if presentingCertificate {
                let response = try await client.collect(request)
                #expect(response.status == 200)
            } else {
                await #expect(throws: (any Error).self) { try await client.collect(request) }
            }
        }
    }

    @Test func oneHundredConcurrentCallsShareOneHTTP2Connection() async throws {
        try await withTLSServer(TestServerTLS(authority: Self.authority.get())) { server, client in
            let statuses = try await withThrowingTaskGroup(of: (Int, HTTPVersion).self) { group in
                for index in 0..<100 {
                    group.addTask {
                        let request = HTTPClientRequest(url: "\(server.baseURL)/get?i=\(index)")
                        let response = try await client.execute(request, timeout: .seconds(30))
                        _ = try await response.body.collect(upTo: 1 << 20)
                        return (Int(response.status.code), response.version)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.count == 100)
            #expect(statuses.allSatisfy { $0 == (200, .http2) })
            #expect(server.requestCount == 100)
            #expect(server.connectionCount == 1)
            #expect(server.negotiatedProtocols == [.http2])
        }
    }

    @Test func goAwayAfterStreamsMovesASequentialClientToNewConnections() async throws {
        let tls = try TestServerTLS(authority: Self.authority.get(), goAway: .afterStreams(2))
        try await withTLSServer(tls) { server, client in
            for index in 0..<6 {
                let response = try await client.collect(HTTPClientRequest(url: "\(server.baseURL)/get?i=\(index)"))
                #expect(response.status == 200)
            }
            // The GOAWAY reaches the client before the second response: it never opens a third stream there.
            #expect(server.requestCount == 6)
            #expect(server.connectionCount == 3)
            #expect(server.negotiatedProtocols == [.http2, .http2, .http2])
        }
    }

    @Test func refusingStreamRefusesTheStreamInFlightWithoutServingIt() async throws {
        let tls = try TestServerTLS(authority: Self.authority.get(), goAway: .refusingStream(3))
        try await withTLSServer(tls) { server, client in
            for index in 0..<2 {
                let response = try await client.collect(HTTPClientRequest(url: "\(server.baseURL)/get?i=\(index)"))
                #expect(response.status == 200)
            }
            // The third request goes out on the same connection as stream 5; the GOAWAY names stream 3.
            let error = await #expect(throws: (any Error).self) {
                try await client.collect(HTTPClientRequest(url: "\(server.baseURL)/get?i=2"))
            }
            // NIOHTTP2 reports a stream dropped by a GOAWAY as closed with CANCEL (its docs say REFUSED_STREAM).
            #expect(
                String(describing: error).contains("StreamClosed(streamID: HTTP2StreamID(5)"),
                "\(String(describing: error))")
            #expect(server.requestCount == 2)
            let next = try await client.collect(HTTPClientRequest(url: "\(server.baseURL)/get?i=3"))
            #expect(next.status == 200)
            #expect(server.requestCount == 3)
            #expect(server.connectionCount == 2)
        }
    }

    @Test(arguments: ["refused_stream", "internal_error", "7"])
    func resetStreamResetsOneStreamAndKeepsTheConnection(code: String) async throws {
        try await withTLSServer(TestServerTLS(authority: Self.authority.get())) { server, client in
            let first = try await client.collect(HTTPClientRequest(url: "\(server.baseURL)/get"))
            #expect(first.status == 200)
            async let others = withThrowingTaskGroup(of: Int.self) { group in
                for index in 1...5 {
                    group.addTask {
                        try await client.collect(HTTPClientRequest(url: "\(server.baseURL)/bytes/\(index)")).body.count
                    }
                }
                return try await group.reduce(0, +)
            }
            let expected = code == "internal_error" ? "Internal Error" : "Refused Stream"
            for query in ["code=\(code)", "code=\(code)&announce=100&send=9"] {
                let error = await #expect(throws: (any Error).self) {
                    try await client.collect(HTTPClientRequest(url: "\(server.baseURL)/fault/reset-stream?\(query)"))
                }
                #expect(String(describing: error).contains(expected), "\(query): \(String(describing: error))")
            }
            let sum = try await others
            #expect(sum == 15)
            let after = try await client.collect(HTTPClientRequest(url: "\(server.baseURL)/get"))
            #expect(after.status == 200)
            #expect(server.connectionCount == 1)
            #expect(server.requestCount == 9)
        }
    }

    @Test(arguments: [TestServerTLS.ApplicationProtocol.http2, .http1])
    func trailersFollowTheChunkedBody(_ applicationProtocol: TestServerTLS.ApplicationProtocol) async throws {
        let authority = try Self.authority.get()
        let tls = TestServerTLS(authority: authority, applicationProtocols: [applicationProtocol])
        try await withTLSServer(tls) { server, client in
            let response = try await client.collect(
                HTTPClientRequest(url: "\(server.baseURL)/trailers/100000?fields=3"))
            #expect(response.headers["Trailer"] == ["X-Trailer-1, X-Trailer-2, X-Trailer-3, X-Body-Length"])
            let alphabet = Array("abcdefghijklmnopqrstuvwxyz".utf8)
            #expect(response.body == (0..<100_000).map { alphabet[$0 % 26] })
            // AsyncHTTPClient hides trailers (behind its unstable API flag); curl's header dump shows them, after the
            // body: an h2 trailing HEADERS frame, or the fields after the last chunk.
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-tls-\(UUID())")
            defer { try? FileManager.default.removeItem(at: directory) }
            let root = try authority.writePEMFiles(to: directory).rootCertificate.path
            let version = applicationProtocol == .http2 ? "--http2" : "--http1.1"
            let dumped = try await shellAwaiting(
                "curl -sS \(version) --cacert '\(root)' -D - -o /dev/null '\(server.baseURL)/trailers/10?fields=1'")
            let lines = dumped.lowercased().split(whereSeparator: \.isNewline).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            #expect(lines.first?.hasPrefix(applicationProtocol == .http2 ? "http/2 200" : "http/1.1 200") == true)
            #expect(lines.suffix(2) == ["x-trailer-1: value-1", "x-body-length: 10"], "\(dumped)")
            #expect(server.negotiatedProtocols == [applicationProtocol, applicationProtocol])
        }
    }

    @Test func shutdownClosesAStalledHTTP2Stream() async throws {
        let authority = try Self.authority.get()
        let server = try await TestServer.start(tls: TestServerTLS(authority: authority))
        var configuration = noRedirects
        configuration.tlsConfiguration = .trusting(authority)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let request = HTTPClientRequest(url: "\(server.baseURL)/fault/stall-after-headers")
        let response = try await client.execute(request, timeout: .seconds(60))
        #expect(response.version == .http2)
        #expect(response.headers["Content-Length"] == ["100"])
        try await server.shutdown()
        await #expect(throws: (any Error).self) {
            _ = try await response.body.collect(upTo: 1024)
        }
        try await client.shutdown()
    }

    @Test func pinsAndFilesMatchWhatOpenSSLComputes() async throws {
        let authority = try Self.authority.get()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-tls-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try authority.writePEMFiles(to: directory)
        let certificates = [
            ("root", authority.root), ("intermediate", authority.intermediate),
            ("server", authority.serverCertificate), ("client", authority.clientCertificate),
        ]
        for (name, certificate) in certificates {
            let path = directory.appendingPathComponent("\(name)-only.pem").path
            try Data(certificate.certificatePEM.utf8).write(to: URL(fileURLWithPath: path))
            let pin = try shell(
                "openssl x509 -in '\(path)' -pubkey -noout | openssl pkey -pubin -outform der"
                    + " | openssl dgst -sha256 -binary | base64")
            #expect(pin == certificate.spkiSHA256Base64, "\(name)")
            let der = try shell("openssl x509 -in '\(path)' -outform der | base64 -w0")
            #expect(der == Data(certificate.certificateDER).base64EncodedString(), "\(name)")
        }
        let keyPin = try shell(
            "openssl pkey -in '\(files.serverPrivateKey.path)' -pubout -outform der | openssl dgst -sha256 -binary"
                + " | base64")
        #expect(keyPin == authority.serverCertificate.spkiSHA256Base64)
        let root = files.rootCertificate.path
        for chain in [files.serverCertificateChain.path, files.clientCertificateChain.path] {
            let verified = try shell("openssl verify -CAfile '\(root)' -untrusted '\(chain)' '\(chain)'")
            #expect(verified.hasSuffix(": OK"), "\(verified)")
        }
        let hosts = try shell("openssl x509 -in '\(files.serverCertificateChain.path)' -noout -ext subjectAltName")
        #expect(hosts.contains("DNS:localhost") && hosts.contains("IP Address:127.0.0.1"), "\(hosts)")
        let mode = try shell("stat -c %a '\(files.serverPrivateKey.path)'")
        #expect(mode == "600")
    }

    /// Runs `command` with `bash -c` and returns its standard output, trimmed; throws when it exits non-zero.
    private func shell(_ command: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", "set -o pipefail; " + command]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "\(command) exited with \(process.terminationStatus)")
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs `command` like ``shell(_:)``, but awaits it instead of blocking a thread of the cooperative pool, which
    /// the server's request tasks need while the command talks to the server.
    private func shellAwaiting(_ command: String) async throws -> String {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("courier-shell-\(UUID())")
        defer { try? FileManager.default.removeItem(at: output) }
        let status = try await withCheckedThrowingContinuation { (finished: CheckedContinuation<Int32, any Error>) in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["-c", "set -o pipefail; (\(command)) > '\(output.path)'"]
            process.terminationHandler = { finished.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                finished.resume(throwing: error)
            }
        }
        try #require(status == 0, "\(command) exited with \(status)")
        return try String(contentsOf: output, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

extension TLSConfiguration {
    /// A client configuration that trusts only `authority`'s root, with default (full) verification.
    static func trusting(_ authority: TestCertificateAuthority) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        let root = try? NIOSSLCertificate(bytes: Array(authority.root.certificatePEM.utf8), format: .pem)
        configuration.trustRoots = .certificates(root.map { [$0] } ?? [])
        return configuration
    }
}

extension HTTPClient {
    /// Sends `request` and reads the whole body.
    @discardableResult
    func collect(_ request: HTTPClientRequest) async throws -> Fetched {
        let response = try await execute(request, timeout: .seconds(20))
        let body = try await response.body.collect(upTo: 16 << 20)
        return Fetched(
            status: Int(response.status.code), headers: response.headers, body: Array(body.readableBytesView))
    }
}

/// Runs `body` against a fresh TLS server and a client trusting the suite's root (or configured by `client`).
///
/// AsyncHTTPClient retries a failed connection until its connect timeout (10 s by default) before failing the
/// request with the last error; `failFast` shortens that to 2 s for tests that expect the handshake to fail.
private func withTLSServer(
    _ tls: TestServerTLS,
    client tlsConfiguration: TLSConfiguration? = nil,
    failFast: Bool = false,
    _ body: (TestServer, HTTPClient) async throws -> Void
) async throws {
    let server = try await TestServer.start(tls: tls)
    var configuration = noRedirects
    configuration.tlsConfiguration = tlsConfiguration ?? .trusting(tls.authority)
    if failFast {
        configuration.timeout.connect = .seconds(2)
    }
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    do {
        try await body(server, client)
        try await client.shutdown()
        try await server.shutdown()
    } catch {
        try? await client.shutdown()
        try? await server.shutdown()
        throw error
    }
}
