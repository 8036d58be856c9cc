import AsyncHTTPClient
import Courier
import CourierCore
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import Testing

@testable import CourierAsyncHTTPClient

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How AsyncHTTPClientTransport names failures no loopback server can cause on demand.
@Suite("AsyncHTTPClient error translation")
struct AHCErrorTranslationTests {
    /// A connection attempt that times out arrives as `NIOConnectionError`; an `IOError` with `ETIMEDOUT` comes from
    /// a connection already made whose peer stopped acknowledging (TCP's retransmission or keep-alive timeout), when
    /// the request may have been sent: never `connectTimeout`, which says it was not.
    @Test("a TCP timeout on a connected socket is a lost connection, not connectTimeout")
    func tcpTimeoutOnceConnected() {
        let timeouts = AsyncHTTPClientTransport.Timeouts(connect: .seconds(10), idle: .seconds(60))
        let error = IOError(errnoCode: ETIMEDOUT, reason: "read(descriptor:pointer:size:)")
        let beforeHead = AsyncHTTPClientTransport.translate(error, phase: .head, timeouts: timeouts) as? CourierError
        let inBody = AsyncHTTPClientTransport.translate(error, phase: .body, timeouts: timeouts) as? CourierError
        #expect(beforeHead?.code == .connectionReset, "\(String(describing: beforeHead))")
        #expect(inBody?.code == .truncatedResponse, "\(String(describing: inBody))")
        #expect(beforeHead?.message?.contains("stopped acknowledging") == true)
    }

    static let timeouts = AsyncHTTPClientTransport.Timeouts(connect: .seconds(10), idle: .seconds(60))

    @Test("an HTTP/2 body that does not match its Content-Length is truncatedResponse, as on HTTP/1.1 (retried)")
    func http2ContentLengthViolated() {
        let error = NIOHTTP2Errors.contentLengthViolated()
        let translated = AsyncHTTPClientTransport.translate(error, phase: .body, timeouts: Self.timeouts)
        #expect((translated as? CourierError)?.code == .truncatedResponse, "\(translated)")
    }

    @Test("a decompression ratio of Int.max (meaning no limit) is clamped where NIO multiplies it: no overflow trap")
    func decompressionRatioIsClamped() {
        #expect(AsyncHTTPClientTransport.Configuration.clampedRatio(.max) == 1 << 24)
        #expect(AsyncHTTPClientTransport.Configuration.clampedRatio(0) == 1)
        #expect(AsyncHTTPClientTransport.Configuration.clampedRatio(100) == 100)
    }

    @Test("httpVersions .http1Only on a transport whose own configuration offers HTTP/2 is unsupported, not ignored")
    func http1OnlyOnAnOwnConfiguration() async throws {
        var tls = TLSOptions.default
        tls.httpVersions = .http1Only
        let request = OutgoingRequest(head: HTTPRequest(method: .get, url: URL(string: "https://127.0.0.1:1/")!))
        let automatic = AsyncHTTPClientTransport(clientConfiguration: HTTPClient.Configuration())
        let refused = await expectCourierError {
            try await automatic.send(request, context: TransportContext(tls: tls))
        }
        #expect(refused?.code == .unsupported, "\(String(describing: refused))")
        // In cleartext there is no HTTP/2 to refuse (no h2c): the request goes out (and finds nothing listening).
        let cleartext = OutgoingRequest(head: HTTPRequest(method: .get, url: URL(string: "http://127.0.0.1:1/")!))
        let plain = await expectCourierError {
            try await automatic.send(cleartext, context: TransportContext(tls: tls))
        }
        #expect(plain?.code != .unsupported, "\(String(describing: plain))")
        try await automatic.shutdown()

        var http1 = HTTPClient.Configuration()
        http1.httpVersion = .http1Only
        let matching = AsyncHTTPClientTransport(clientConfiguration: http1)
        let sent = await expectCourierError { try await matching.send(request, context: TransportContext(tls: tls)) }
        #expect(sent?.code != .unsupported, "\(String(describing: sent))")
        try await matching.shutdown()
    }

    @Test("EOF during the TLS handshake is a reset connection that sent nothing, so any method is retried")
    func eofDuringHandshake() {
        for stack: NIOBoringSSLErrorStack in [[.eofDuringHandshake], [.eofDuringAdditionalCertficiateChainValidation]] {
            let error = NIOSSLError.handshakeFailed(.sslError(stack))
            let translated = AsyncHTTPClientTransport.translate(error, phase: .head, timeouts: Self.timeouts)
            let courier = translated as? CourierError
            #expect(courier?.code == .connectionReset && courier?.isKnownUnsent == true, "\(translated)")
        }
    }

    @Test("a server that closes every connection during the TLS handshake: a POST is tried 3 times, connectionReset")
    func serverClosingDuringHandshake() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let accepted = AcceptCounter()
        let server = try await ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                accepted.increment()
                return channel.pipeline.addHandler(CloseOnHello())
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(server.localAddress?.port)
        let transport = AsyncHTTPClientTransport()
        var configuration = Client.Configuration(retryPolicy: RetryPolicy(backoff: .none))
        configuration.cleartextPolicy = .never
        let client = Client(
            server: Server(baseURL: URL(string: "https://127.0.0.1:\(port)")!), transport: transport,
            configuration: configuration)
        do {
            _ = try await client.send(PostProbe())
            Issue.record("the call succeeded against a server that closes every connection")
        } catch let error as CourierError {
            #expect(error.code == .connectionReset, "\(error)")
            #expect(error.isKnownUnsent, "\(error)")
            #expect(error.message?.contains("TLS handshake") == true, "\(error)")
            // Retried although a POST: the policy's 2 retries (AsyncHTTPClient may open more than one connection
            // for an attempt, so the server's count is at least the attempts).
            #expect(error.trace.steps.map(\.attempt).max() == 3, "\(error.trace)")
        }
        #expect(accepted.value >= 3)
        try await transport.shutdown()
        try await server.close()
        try await group.shutdownGracefully()
    }

    /// Reads the client's first bytes (its ClientHello), then closes: a FIN, as a load balancer that gives up on
    /// the connection sends it (closing before reading would make the kernel answer the hello with a reset).
    final class CloseOnHello: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        func channelRead(context: ChannelHandlerContext, data: NIOAny) { context.close(promise: nil) }
    }

    /// A POST, which only a failure known to have sent nothing lets the retry policy send again.
    struct PostProbe: Request {
        typealias Response = Data
        var method: HTTPRequest.Method { .post }
        var path: String { "/post" }
        var body: RequestBody? { .text("once") }
    }

    /// A counter the server's event loop bumps and the test reads.
    final class AcceptCounter: Sendable {
        private let box = LockedBox(0)
        var value: Int { box.withLock { $0 } }
        func increment() { box.withLock { $0 += 1 } }
    }

    @Test("REFUSED_STREAM before the head: sent nothing, so it is retried whatever the method; in the body, truncated")
    func refusedStream() {
        let closed = NIOHTTP2Errors.streamClosed(streamID: 1, errorCode: .refusedStream)
        let head = AsyncHTTPClientTransport.translate(closed, phase: .head, timeouts: Self.timeouts) as? CourierError
        let body = AsyncHTTPClientTransport.translate(closed, phase: .body, timeouts: Self.timeouts) as? CourierError
        #expect(head?.code == .connectionReset && head?.isKnownUnsent == true)
        #expect(body?.code == .truncatedResponse && body?.isKnownUnsent == false)
    }

    @Test("an alert about the client's certificate (expired, revoked) names the client certificate, not the server's")
    func clientCertificateAlerts() {
        for name in ["SSLV3_ALERT_CERTIFICATE_EXPIRED", "SSLV3_ALERT_CERTIFICATE_REVOKED"] {
            let failure = TLSFailure.classify(handshake: "error:10000415:SSL routines:OPENSSL_internal:\(name)")
            #expect(failure.code == .clientCertificateRejected, "\(name)")
            #expect(failure.message.contains("client certificate"), "\(name)")
        }
        #expect(TLSFailure.classify(handshake: "CERTIFICATE_VERIFY_FAILED").code == .untrustedCertificate)
    }

    @Test("per-call TLS options keep a TLS 1.3 minimum of the base configuration; only an explicit lower one lowers it")
    func minimumVersionOnTopOfTheBase() throws {
        var strict = TLSConfiguration.makeClientConfiguration()
        strict.minimumTLSVersion = .tlsv13
        let base = TLSMapping.Base(strict)
        let request = HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/")
        var options = TLSOptions.default
        options.trust = .systemAnd([])
        #expect(
            try TLSMapping.configuration(for: options, request: request, base: base)?
                .minimumTLSVersion == .tlsv13)
        options.minimumVersion = .tls11
        #expect(
            try TLSMapping.configuration(for: options, request: request, base: base)?
                .minimumTLSVersion == .tlsv11)
    }

}
