import Courier
import CourierTestServer
import Foundation
import Testing

/// A server that must be refused, and the code that names why.
struct BadTLSServer: Sendable, CustomTestStringConvertible, Hashable {
    let name: String
    /// The embedded server's mode, or `nil` for an nginx block.
    let mode: TestServerTLS.Mode?
    /// For nginx: the `<variant>` of `COURIER_NGINX_<variant>_URL`.
    let nginxVariant: String?
    let expected: CourierError.Code
    var testDescription: String { name }

    static func embedded(_ mode: TestServerTLS.Mode, _ expected: CourierError.Code) -> BadTLSServer {
        BadTLSServer(name: "embedded \(mode)", mode: mode, nginxVariant: nil, expected: expected)
    }

    static func nginx(_ variant: String, _ expected: CourierError.Code) -> BadTLSServer {
        BadTLSServer(name: "nginx \(variant.lowercased())", mode: nil, nginxVariant: variant, expected: expected)
    }

    static let all: [BadTLSServer] = [
        .embedded(.expired, .certificateExpired), .embedded(.wrongHost, .hostnameMismatch),
        .embedded(.selfSigned, .untrustedCertificate), .embedded(.unknownCA, .untrustedCertificate),
        .embedded(.missingIntermediate, .untrustedCertificate), .embedded(.tls11Only, .tlsHandshakeFailed),
        .nginx("EXPIRED", .certificateExpired), .nginx("WRONG_HOST", .hostnameMismatch),
        .nginx("SELF_SIGNED", .untrustedCertificate), .nginx("UNKNOWN_CA", .untrustedCertificate),
        .nginx("TLS11", .tlsHandshakeFailed),
    ]
}

extension Conformance.TLSConformanceTests {
    @Test(
        "rows 42, 29: each bad certificate is its own typed code, within 2 s, never retried, nothing sent",
        arguments: TransportKind.all, BadTLSServer.all)
    func badCertificate(transport: TransportKind, bad: BadTLSServer) async throws {
        let authority = try TLSLab.authority.get()
        // The client trusts the lab's root (the embedded server's, or nginx's): only the defect is left.
        let check: (URL, TLSOptions, TestServer?) async throws -> Void = { baseURL, tls, server in
            try await tlsCase(bad.name, on: transport, needs: [.customTrust]) {
                let client = tlsClient(transport.make(), baseURL, tls)  // RetryPolicy.default is in force
                let start = ContinuousClock.now
                let error = try await expectTLSFailure { try await client.send(HTTPSBytes(path: "/get")) }
                let elapsed = ContinuousClock.now - start
                #expect(error?.code == bad.expected, "\(String(describing: error))")
                #expect(elapsed < .seconds(5), "took \(elapsed)")
                #expect(attempts(error) == 1, "a TLS failure is never retried")
                #expect(error.map { ErrorMessageProvider().message(for: $0) } == TLSLab.secureConnectionSentence)
                if let server {
                    #expect(server.requestCount == 0)
                    // One handshake, and at most one more to diagnose the chain; a retry would make 3 or more.
                    #expect(server.connectionCount <= 2, "\(server.connectionCount) connections")
                }
                return error?.code.description ?? "-"
            }
        }
        if let mode = bad.mode {
            try await withTLSServer(TestServerTLS(authority: authority, mode: mode)) { server in
                try await check(server.baseURL, try TLSLab.trusting(authority), server)
            }
        } else if let variant = bad.nginxVariant, let url = NginxLab.url(variant), let trust = try NginxLab.trust() {
            try await check(url, TLSOptions(trust: trust), nil)
        } else {
            try skipCase("\(bad.name): \(NginxLab.missingReason)")
        }
    }

    @Test(
        "mutual TLS: the client certificate is presented; without one the server refuses", arguments: TransportKind.all)
    func mutualTLS(transport: TransportKind) async throws {
        let authority = try TLSLab.authority.get()
        let server = TestServerTLS(authority: authority, mode: .clientCertificateRequired)
        try await withTLSServer(server) { server in
            try await tlsCase(
                "mTLS with a client certificate", on: transport, needs: [.customTrust, .clientCertificate]
            ) {
                var tls = try TLSLab.trusting(authority)
                tls.clientIdentity = .pem(
                    certificateChain: authority.clientCertificate.chainPEM,
                    privateKey: authority.clientCertificate.privateKeyPEM)
                let echo = try await tlsClient(transport.make(), server.baseURL, tls).send(
                    HTTPSCall<Echo>(path: "/get"))
                #expect(echo.url.hasSuffix("/get"))
                #expect(server.requestCount == 1)
                return "ok"
            }
            try await tlsCase("mTLS without a client certificate", on: transport, needs: [.customTrust]) {
                let before = server.requestCount
                let connectionsBefore = server.connectionCount
                let client = tlsClient(transport.make(), server.baseURL, try TLSLab.trusting(authority))
                let start = ContinuousClock.now
                let error = try await expectTLSFailure { try await client.send(HTTPSBytes(path: "/get")) }
                // With TLS 1.3 the client's handshake is over before the server checks, and AsyncHTTPClient
                // reports the server's alert as a closed connection: the first is retried like a stale connection
                // (row 25), the second is diagnosed (one handshake without a request) and not retried again.
                #expect(error?.code == .clientCertificateRejected, "\(String(describing: error))")
                #expect(attempts(error) <= 2, "retried \(attempts(error)) times")
                #expect(ContinuousClock.now - start < .seconds(5))
                #expect(server.requestCount == before)
                let handshakes = server.connectionCount - connectionsBefore
                return
                    "\(error?.code.description ?? "-") after \(attempts(error)) attempt(s), \(handshakes) handshake(s)"
            }
        }
    }

    @Test(
        "mutual TLS on an HTTP/1.1-only server: without a client certificate, clientCertificateRejected",
        arguments: TransportKind.all)
    func mutualTLSOverHTTP1(transport: TransportKind) async throws {
        let authority = try TLSLab.authority.get()
        let server = TestServerTLS(
            authority: authority, mode: .clientCertificateRequired, applicationProtocols: [.http1])
        try await withTLSServer(server) { server in
            try await tlsCase("mTLS over HTTP/1.1 without a client certificate", on: transport, needs: [.customTrust]) {
                let client = tlsClient(transport.make(), server.baseURL, try TLSLab.trusting(authority))
                let error = try await expectTLSFailure { try await client.send(HTTPSBytes(path: "/get")) }
                // TLS 1.3: the server's alert comes after the client's handshake, as BoringSSL's error on the first
                // read (AsyncHTTPClient passes it on as it is) or as a closed connection.
                #expect(error?.code == .clientCertificateRejected, "\(String(describing: error))")
                #expect(attempts(error) <= 2, "retried \(attempts(error)) times")
                #expect(server.requestCount == 0)
                return "\(error?.code.description ?? "-") after \(attempts(error)) attempt(s)"
            }
        }
    }

    @Test(
        "mutual TLS with a private key that is not the certificate's: invalidConfiguration, once, before connecting")
    func mutualTLSWithAnotherKey() async throws {
        let authority = try TLSLab.authority.get()
        let interceptor = try TLSLab.interceptor.get()
        try await withTLSServer(TestServerTLS(authority: authority, mode: .clientCertificateRequired)) { server in
            var tls = try TLSLab.trusting(authority)
            tls.clientIdentity = .pem(
                certificateChain: authority.clientCertificate.chainPEM,
                privateKey: interceptor.clientCertificate.privateKeyPEM)
            let client = tlsClient(TransportKind.asyncHTTPClient.make(), server.baseURL, tls)
            let error = try await expectTLSFailure { try await client.send(HTTPSBytes(path: "/get")) }
            // Before: a connection that could not be made (connectionFailed), retried twice.
            #expect(error?.code == .invalidConfiguration, "\(String(describing: error))")
            #expect(error?.message?.contains("does not belong to its private key") == true)
            #expect(attempts(error) == 1)
            #expect(server.connectionCount == 0 && server.requestCount == 0)
        }
    }

    @Test(
        "mutual TLS from PEM files: files written late, replaced or repaired are read again at the next call",
        arguments: TransportKind.all)
    func mutualTLSFromFiles(transport: TransportKind) async throws {
        let authority = try TLSLab.authority.get()
        try await withTLSServer(TestServerTLS(authority: authority, mode: .clientCertificateRequired)) { server in
            try await tlsCase("mTLS from changing files", on: transport, needs: [.customTrust, .clientCertificate]) {
                let manager = FileManager.default
                let directory = manager.temporaryDirectory.appendingPathComponent("courier-mtls-\(UUID().uuidString)")
                try manager.createDirectory(at: directory, withIntermediateDirectories: true)
                defer { try? manager.removeItem(at: directory) }
                let chain = directory.appendingPathComponent("tls.crt")
                let key = directory.appendingPathComponent("tls.key")
                func writeIdentity() throws {
                    try Data(authority.clientCertificate.chainPEM.utf8).write(to: chain)
                    try Data(authority.clientCertificate.privateKeyPEM.utf8).write(to: key)
                }
                var tls = try TLSLab.trusting(authority)
                tls.clientIdentity = .pemFiles(certificateChain: chain, privateKey: key)
                let client = tlsClient(transport.make(), server.baseURL, tls)

                // Not written yet (a sidecar still starting): this call fails before connecting, and only this one.
                let missing = try await expectTLSFailure { try await client.send(HTTPSBytes(path: "/get")) }
                #expect(missing?.message?.contains("TLS options") == true, "\(String(describing: missing))")
                #expect(missing?.code == .invalidConfiguration && attempts(missing) == 1)
                try writeIdentity()
                _ = try await client.send(HTTPSBytes(path: "/get"))
                #expect(server.requestCount == 1)
                // Replaced by something unusable: read again, not served from the identity read before.
                try Data("not a certificate".utf8).write(to: chain)
                let broken = try await expectTLSFailure { try await client.send(HTTPSBytes(path: "/get")) }
                #expect(broken?.message?.contains("TLS options") == true, "\(String(describing: broken))")
                #expect(broken?.code == .invalidConfiguration && attempts(broken) == 1)
                #expect(server.requestCount == 1)
                try writeIdentity()
                _ = try await client.send(HTTPSBytes(path: "/get"))
                #expect(server.requestCount == 2)
                return "missing, written, broken, repaired: fail, ok, fail, ok"
            }
        }
    }

    @Test(
        "RFC 8996: a TLS 1.1 server is refused by default, and reached when the minimum is lowered",
        arguments: TransportKind.all, TLSTarget.all)
    func minimumVersion(transport: TransportKind, target: TLSTarget) async throws {
        guard let protocols = target.protocols else {
            guard let url = NginxLab.url("TLS11"), let trust = try NginxLab.trust() else {
                try skipCase("TLS 1.1 server (nginx): \(NginxLab.missingReason)")
            }
            try await Self.checkMinimumVersion(transport, target, url, TLSOptions(trust: trust), nil)
            return
        }
        let authority = try TLSLab.authority.get()
        let tls = TestServerTLS(authority: authority, mode: .tls11Only, applicationProtocols: protocols)
        try await withTLSServer(tls) { server in
            try await Self.checkMinimumVersion(
                transport, target, server.baseURL, try TLSLab.trusting(authority), server)
        }
    }

    static func checkMinimumVersion(
        _ transport: TransportKind,
        _ target: TLSTarget,
        _ baseURL: URL,
        _ tls: TLSOptions,
        _ server: TestServer?
    ) async throws {
        try await tlsCase("TLS 1.1 server, default minimum (\(target.name))", on: transport, needs: [.customTrust]) {
            let error = try await expectTLSFailure {
                try await tlsClient(transport.make(), baseURL, tls).send(HTTPSBytes(path: "/get"))
            }
            #expect(error?.code == .tlsHandshakeFailed, "\(String(describing: error))")
            #expect(attempts(error) == 1)
            #expect(server.map { $0.requestCount == 0 } ?? true)
            return error?.code.description ?? "-"
        }
        try await tlsCase(
            "TLS 1.1 server, minimum TLS 1.1 (\(target.name))", on: transport,
            needs: [.customTrust, .minimumTLSVersion]
        ) {
            var relaxed = tls
            relaxed.minimumVersion = .tls11
            // The nginx block answers every path with "TLS 1.1"; the embedded server echoes.
            let body = try await tlsClient(transport.make(), baseURL, relaxed).send(HTTPSBytes(path: "/get"))
            #expect(!body.isEmpty)
            // HTTP/2 requires TLS 1.2 (RFC 9113 §9.2): a TLS 1.1 connection speaks HTTP/1.1.
            let negotiated = server?.negotiatedProtocols ?? [.http1]
            #expect(negotiated == [.http1], "negotiated \(negotiated.map(\.rawValue)) over TLS 1.1")
            return "ok"
        }
    }
}
