#if TestServer
    import Foundation
    import NIOCore
    import NIOSSL

    extension TestServerTLS {
        /// What a server needs for its handshakes: the NIOSSL context and the leaf it presents.
        struct Prepared: Sendable {
            let context: NIOSSLContext
            let presented: TestCertificate
        }

        /// The leaf and chain for ``mode``, and a server context presenting them with ``applicationProtocols``.
        func prepare() throws -> Prepared {
            let now = Date()
            let presented: TestCertificate
            switch mode {
            case .valid, .missingIntermediate, .clientCertificateRequired, .tls11Only:
                presented = authority.serverCertificate
            case .expired:
                presented = try authority.issueServerCertificate(
                    dnsNames: ["localhost"],
                    ipAddresses: ["127.0.0.1", "::1"],
                    notValidBefore: now.addingTimeInterval(-30 * 86_400),
                    notValidAfter: now.addingTimeInterval(-86_400)
                )
            case .wrongHost:
                presented = try authority.issueServerCertificate(dnsNames: ["wrong.example.test"])
            case .selfSigned:
                presented = try TestCertificateAuthority.selfSignedServerCertificate(
                    dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
            case .unknownCA:
                presented = try TestCertificateAuthority(name: "Courier Untrusted").serverCertificate
            }
            let chainDER = mode == .missingIntermediate ? [presented.certificateDER] : presented.chainDER
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: try chainDER.map { .certificate(try NIOSSLCertificate(bytes: $0, format: .der)) },
                privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(presented.privateKeyPEM.utf8), format: .pem))
            )
            configuration.applicationProtocols = applicationProtocols.map(\.rawValue)
            // A client that never answers close_notify should not hold a shutdown for NIOSSL's default 5 seconds.
            configuration.shutdownTimeout = .seconds(1)
            switch mode {
            case .clientCertificateRequired:
                configuration.certificateVerification = .noHostnameVerification
                configuration.trustRoots = .certificates([
                    try NIOSSLCertificate(bytes: authority.root.certificateDER, format: .der)
                ])
                configuration.sendCANameList = true
            case .tls11Only:
                configuration.minimumTLSVersion = .tlsv11
                configuration.maximumTLSVersion = .tlsv11
            case .valid, .expired, .wrongHost, .selfSigned, .unknownCA, .missingIntermediate:
                break
            }
            return Prepared(context: try NIOSSLContext(configuration: configuration), presented: presented)
        }
    }
#endif
