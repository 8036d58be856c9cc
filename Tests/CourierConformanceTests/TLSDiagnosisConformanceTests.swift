import Courier
import CourierAsyncHTTPClient
import CourierCore
import CourierTestServer
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Testing

/// What AsyncHTTPClientTransport names a refused chain after its diagnosis handshake: `certificateExpired` only when
/// the path to a trusted (or pinned) root fails on time alone, `pinMismatch` only when the chain is known to lead to
/// a root that is not pinned, and `untrustedCertificate` whenever the chain cannot tell more.
extension Conformance {
    @Suite("AsyncHTTPClient transport: TLS failure diagnosis", .timeLimit(.minutes(2)))
    struct TLSDiagnosisConformanceTests {
        typealias Authority = TestCertificateAuthority

        /// A refused chain, the pins on `localhost` (none, or the lab root's with a backup), and the code expected.
        struct Case: Sendable, CustomTestStringConvertible {
            let name: String
            /// The roots the client trusts: the lab's (A) alone, or the lab's and the interceptor's (B).
            let trustsInterceptor: Bool
            let pinned: Bool
            let expected: CourierError.Code
            /// The chain the server presents (DER, leaf first) and the leaf's key, from the lab and the interceptor.
            let presents: Presenting
            var testDescription: String { name }

            typealias Presenting = @Sendable (_ lab: Authority, _ interceptor: Authority) throws -> ([[UInt8]], String)

            init(
                _ name: String, trustsInterceptor: Bool = false, pinned: Bool = false, _ expected: CourierError.Code,
                presents: @escaping Presenting
            ) {
                self.name = name
                self.trustsInterceptor = trustsInterceptor
                self.pinned = pinned
                self.expected = expected
                self.presents = presents
            }
        }

        /// A certificate of `authority` for `name` that ended a day ago (after 29 days), with its intermediate.
        static func expired(_ authority: Authority, name: String = "localhost") throws -> TestCertificate {
            let now = Date()
            return try authority.issueServerCertificate(
                dnsNames: [name], ipAddresses: name == "localhost" ? ["127.0.0.1", "::1"] : [],
                notValidBefore: now - 30 * 86_400, notValidAfter: now - 86_400)
        }

        static let cases: [Case] = [
            // (a) An expired extra certificate (from the trusted lab, with its intermediate) next to an untrusted
            // leaf: the leaf's chain leads nowhere, whatever the extra one says.
            Case("self-signed leaf + an expired extra certificate", .untrustedCertificate) { lab, _ in
                let leaf = try TestCertificateAuthority.selfSignedServerCertificate(
                    dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
                let extra = try expired(lab, name: "old.example.test")
                return ([leaf.certificateDER] + extra.chainDER, leaf.privateKeyPEM)
            },
            Case("unknown CA's chain + an expired extra certificate", .untrustedCertificate) { lab, _ in
                let leaf = try TestCertificateAuthority(name: "Courier Unknown").serverCertificate
                let extra = try expired(lab, name: "old.example.test")
                return (leaf.chainDER + extra.chainDER, leaf.privateKeyPEM)
            },
            // An expired leaf from a CA nobody trusts: valid or not, nobody vouches for it.
            Case("expired leaf from an untrusted CA", .untrustedCertificate) { _, interceptor in
                let leaf = try expired(interceptor)
                return (leaf.chainDER, leaf.privateKeyPEM)
            },
            // (b) The only thing wrong is the time.
            Case("expired leaf from the trusted CA", .certificateExpired) { lab, _ in
                let leaf = try expired(lab)
                return (leaf.chainDER, leaf.privateKeyPEM)
            },
            // A chain longer than the diagnosis follows (swift-certificates tries every path through it, unbounded):
            // the same expired leaf, with five more certificates, is not diagnosed.
            Case("expired leaf from the trusted CA in a chain of 7", .untrustedCertificate) { lab, _ in
                let leaf = try expired(lab)
                let padding = try (1...5).map { try TestCertificateAuthority(name: "Courier Padding \($0)") }
                return (leaf.chainDER + padding.map(\.serverCertificate.certificateDER), leaf.privateKeyPEM)
            },
            // (c) Pinned to the lab's root, with chains that lead there but fail for another reason.
            Case("pinned root: expired leaf that leads to it", pinned: true, .certificateExpired) { lab, _ in
                let leaf = try expired(lab)
                return (leaf.chainDER, leaf.privateKeyPEM)
            },
            Case("pinned root: its leaf without the intermediate", pinned: true, .untrustedCertificate) { lab, _ in
                ([lab.serverCertificate.certificateDER], lab.serverCertificate.privateKeyPEM)
            },
            // (d) Pinned to the lab's root, with chains known to end at another root.
            Case("pinned root: a trusted interceptor's chain", trustsInterceptor: true, pinned: true, .pinMismatch) {
                _, interceptor in
                (interceptor.serverCertificate.chainDER, interceptor.serverCertificate.privateKeyPEM)
            },
            Case("pinned root: an interceptor's expired leaf", trustsInterceptor: true, pinned: true, .pinMismatch) {
                _, interceptor in
                let leaf = try expired(interceptor)
                return (leaf.chainDER, leaf.privateKeyPEM)
            },
            Case("pinned root: a self-signed leaf", pinned: true, .pinMismatch) { _, _ in
                let leaf = try TestCertificateAuthority.selfSignedServerCertificate(
                    dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
                return ([leaf.certificateDER], leaf.privateKeyPEM)
            },
            // A chain that ends at a root nobody here knows (its root not sent) cannot be told from the pinned
            // root's chain without its intermediate: untrusted, not a pin verdict.
            Case("pinned root: an unknown CA's chain, root not sent", pinned: true, .untrustedCertificate) { _, _ in
                let leaf = try TestCertificateAuthority(name: "Courier Unknown").serverCertificate
                return (leaf.chainDER, leaf.privateKeyPEM)
            },
        ]

        @Test("each refused chain gets the code it shows, in one attempt, nothing sent", arguments: cases)
        func diagnosis(_ chainCase: Case) async throws {
            let lab = try TLSLab.authority.get()
            let interceptor = try TLSLab.interceptor.get()
            let (chain, key) = try chainCase.presents(lab, interceptor)
            var roots = lab.root.certificatePEM
            if chainCase.trustsInterceptor { roots += interceptor.root.certificatePEM }
            var tls = TLSOptions(trust: .only(try TLSOptions.Certificate.pem(roots)))
            if chainCase.pinned {
                let pins: Set = [lab.root.spkiSHA256Base64, TLSLab.unrelatedPin("diagnosis backup")]
                tls.pins = [try TLSOptions.PinSet(host: "localhost", pins: pins)]
            }
            try await withChainServer(presenting: chain, privateKeyPEM: key) { server in
                let error = try await expectTLSFailure {
                    try await tlsClient(AsyncHTTPClientTransport(), server.baseURL, tls).send(HTTPSBytes(path: "/get"))
                }
                #expect(error?.code == chainCase.expected, "\(String(describing: error))")
                #expect(attempts(error) == 1, "a TLS failure is never retried")
                #expect(server.requestCount == 0, "a request byte reached the server")
                // The refused handshake and the diagnosis's one (so an untrusted verdict is the diagnosis's too).
                #expect(server.connectionCount == 2, "\(server.connectionCount) connections")
            }
        }

        @Test("a transport on your configuration diagnoses against that configuration's roots")
        func yourConfigurationsRoots() async throws {
            let lab = try TLSLab.authority.get()
            let configuration = try OwnConfigurationTLSConformanceTests.configuration(trusting: lab)
            let transport = AsyncHTTPClientTransport(clientConfiguration: configuration)
            defer { Task { try? await transport.shutdown() } }
            let leaf = try Self.expired(lab)
            // Default TLSOptions: the configuration's roots (the lab's) stand for the system's.
            try await withChainServer(presenting: leaf.chainDER, privateKeyPEM: leaf.privateKeyPEM) { server in
                let error = try await expectTLSFailure {
                    try await tlsClient(transport, server.baseURL, .default).send(HTTPSBytes(path: "/get"))
                }
                #expect(error?.code == .certificateExpired, "\(String(describing: error))")
                #expect(server.requestCount == 0)
            }
        }
    }
}

/// A TLS listener on 127.0.0.1 that presents any chain, which ``TestServerTLS``'s modes cannot (a chain with an
/// extra certificate, or a leaf of another authority). It never answers: it counts connections, and application
/// data (a request) received after a handshake.
final class ChainServer: Sendable {
    private let channel: any Channel
    private let counts: Counts
    let baseURL: URL

    /// Connections accepted.
    var connectionCount: Int { counts.connections.withLock { $0 } }
    /// Connections that received application data after the handshake: requests that reached the server.
    var requestCount: Int { counts.requests.withLock { $0 } }

    final class Counts: Sendable {
        let connections = LockedBox(0)
        let requests = LockedBox(0)
    }

    private init(channel: any Channel, counts: Counts) throws {
        self.channel = channel
        self.counts = counts
        guard let port = channel.localAddress?.port, let baseURL = URL(string: "https://localhost:\(port)") else {
            throw ChannelError.unknownLocalAddress
        }
        self.baseURL = baseURL
    }

    static func start(presenting chain: [[UInt8]], privateKeyPEM: String) async throws -> ChainServer {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try chain.map { .certificate(try NIOSSLCertificate(bytes: $0, format: .der)) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)))
        configuration.shutdownTimeout = .seconds(1)
        let context = try NIOSSLContext(configuration: configuration)
        let counts = Counts()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                counts.connections.withLock { $0 += 1 }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        NIOSSLServerHandler(context: context), RequestCounter(counts: counts),
                    ])
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return try ChainServer(channel: channel, counts: counts)
    }

    func shutdown() async throws {
        try await channel.close()
    }

    /// Counts a connection that sent application data, and closes it.
    private final class RequestCounter: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let counts: Counts

        init(counts: Counts) { self.counts = counts }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            counts.requests.withLock { $0 += 1 }
            context.close(promise: nil)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}

/// Runs `body` with a ``ChainServer`` presenting `chain`, closing it afterwards whatever happens.
func withChainServer(
    presenting chain: [[UInt8]], privateKeyPEM: String, _ body: (ChainServer) async throws -> Void
) async throws {
    let server = try await ChainServer.start(presenting: chain, privateKeyPEM: privateKeyPEM)
    do {
        try await body(server)
        try await server.shutdown()
    } catch {
        try? await server.shutdown()
        throw error
    }
}
