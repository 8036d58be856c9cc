import AsyncHTTPClient
import Courier
import CourierAsyncHTTPClient
import CourierTestServer
import Foundation
import NIOSSL
import Testing

/// `AsyncHTTPClientTransport(clientConfiguration:)` with TLS settings of your own: RFC 8996's TLS 1.2 floor holds,
/// and a request's `TLSOptions` build on your configuration instead of replacing it.
extension Conformance {
    @Suite("AsyncHTTPClient transport: your TLS configuration")
    struct OwnConfigurationTLSConformanceTests {
        /// An AsyncHTTPClient configuration trusting the lab's root, as a user trusts a private CA; its minimum
        /// version is NIOSSL's default, TLS 1.0.
        static func configuration(trusting authority: TestCertificateAuthority) throws -> HTTPClient.Configuration {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: authority.root.certificateDER, format: .der)])
            var configuration = HTTPClient.Configuration()
            configuration.tlsConfiguration = tls
            // AsyncHTTPClient's default retries a failed handshake until its 10 s connect timeout.
            configuration.connectionPool.retryConnectionEstablishment = false
            return configuration
        }

        @Test(
            "a TLS 1.1 server is refused with default TLSOptions, and reached with your roots when the minimum is lowered"
        )
        func minimumVersionOnYourConfiguration() async throws {
            let authority = try TLSLab.authority.get()
            let tls = TestServerTLS(authority: authority, mode: .tls11Only, applicationProtocols: [.http1])
            try await withTLSServer(tls) { server in
                let transport = AsyncHTTPClientTransport(
                    clientConfiguration: try Self.configuration(trusting: authority))
                defer { Task { try? await transport.shutdown() } }

                let error = await expectCourierError {
                    try await tlsClient(transport, server.baseURL, .default).send(HTTPSBytes(path: "/get"))
                }
                #expect(error?.code == .tlsHandshakeFailed, "\(String(describing: error))")
                #expect(server.requestCount == 0)

                // Lowered: the request's options keep the configuration's roots (trust `.system` adds nothing).
                var relaxed = TLSOptions.default
                relaxed.minimumVersion = .tls11
                let body = try await tlsClient(transport, server.baseURL, relaxed).send(HTTPSBytes(path: "/get"))
                #expect(!body.isEmpty)
                #expect(server.requestCount == 1)
            }
        }

        @Test("TLSOptions on your configuration keep its roots: a minimum of TLS 1.3, and a pin on its root")
        func yourRootsWithOptions() async throws {
            let authority = try TLSLab.authority.get()
            let tls = TestServerTLS(authority: authority, mode: .valid, applicationProtocols: [.http1])
            try await withTLSServer(tls) { server in
                let transport = AsyncHTTPClientTransport(
                    clientConfiguration: try Self.configuration(trusting: authority))
                defer { Task { try? await transport.shutdown() } }
                _ = try await tlsClient(transport, server.baseURL, .default).send(HTTPSBytes(path: "/get"))
                var strict = TLSOptions.default
                strict.minimumVersion = .tls13
                _ = try await tlsClient(transport, server.baseURL, strict).send(HTTPSBytes(path: "/get"))
                var pinned = TLSOptions.default
                let host = try #require(server.baseURL.host)
                pinned.pins = [
                    try TLSOptions.PinSet(
                        host: host, pins: [authority.root.spkiSHA256Base64, TLSLab.unrelatedPin("backup")])
                ]
                _ = try await tlsClient(transport, server.baseURL, pinned).send(HTTPSBytes(path: "/get"))
                #expect(server.requestCount == 3)
            }
        }

        @Test("pins and trust of a request are checked on your configuration that checks no certificate")
        func optionsOnAConfigurationWithoutVerification() async throws {
            let authority = try TLSLab.authority.get()
            let interceptor = try TLSLab.interceptor.get()
            let tls = TestServerTLS(authority: authority, mode: .valid, applicationProtocols: [.http1])
            try await withTLSServer(tls) { server in
                var configuration = try Self.configuration(trusting: authority)
                configuration.tlsConfiguration?.certificateVerification = .none
                let transport = AsyncHTTPClientTransport(clientConfiguration: configuration)
                defer { Task { try? await transport.shutdown() } }
                let host = try #require(server.baseURL.host)
                // Pinned to the interceptor's root: the server's chain is not under it.
                var pinned = TLSOptions.default
                pinned.trust = .systemAnd(try TLSOptions.Certificate.pem(interceptor.root.certificatePEM))
                pinned.pins = [
                    try TLSOptions.PinSet(
                        host: host, pins: [interceptor.root.spkiSHA256Base64, TLSLab.unrelatedPin("backup")])
                ]
                let error = await expectCourierError {
                    try await tlsClient(transport, server.baseURL, pinned).send(HTTPSBytes(path: "/get"))
                }
                #expect(
                    error?.code == .pinMismatch || error?.code == .untrustedCertificate, "\(String(describing: error))")
                // Trusting only the interceptor's root: the server's certificate is not trusted.
                let only = TLSOptions(trust: .only(try TLSOptions.Certificate.pem(interceptor.root.certificatePEM)))
                let untrusted = await expectCourierError {
                    try await tlsClient(transport, server.baseURL, only).send(HTTPSBytes(path: "/get"))
                }
                #expect(untrusted?.code == .untrustedCertificate, "\(String(describing: untrusted))")
                #expect(server.requestCount == 0)
            }
        }

        @Test("trust .only leaves out your configuration's additional roots")
        func onlyLeavesOutAdditionalRoots() async throws {
            let authority = try TLSLab.authority.get()
            let interceptor = try TLSLab.interceptor.get()
            let tls = TestServerTLS(authority: authority, mode: .valid, applicationProtocols: [.http1])
            try await withTLSServer(tls) { server in
                var configuration = HTTPClient.Configuration()
                var base = TLSConfiguration.makeClientConfiguration()
                base.additionalTrustRoots = [
                    .certificates([try NIOSSLCertificate(bytes: authority.root.certificateDER, format: .der)])
                ]
                configuration.tlsConfiguration = base
                configuration.connectionPool.retryConnectionEstablishment = false
                let transport = AsyncHTTPClientTransport(clientConfiguration: configuration)
                defer { Task { try? await transport.shutdown() } }
                // Your additional root is trusted with the default options...
                _ = try await tlsClient(transport, server.baseURL, .default).send(HTTPSBytes(path: "/get"))
                // ...and not when a request trusts only the interceptor's root.
                let only = TLSOptions(trust: .only(try TLSOptions.Certificate.pem(interceptor.root.certificatePEM)))
                let error = await expectCourierError {
                    try await tlsClient(transport, server.baseURL, only).send(HTTPSBytes(path: "/get"))
                }
                #expect(error?.code == .untrustedCertificate, "\(String(describing: error))")
                #expect(server.requestCount == 1)
            }
        }
    }
}
