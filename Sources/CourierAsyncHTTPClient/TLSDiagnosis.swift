#if AsyncHTTPClient
    import CourierCore
    import Foundation
    import NIOCore
    import NIOPosix
    import NIOSSL
    import SwiftASN1
    import X509

    /// Finds out why a server's certificate was refused, when BoringSSL only said "verification failed".
    ///
    /// After a handshake failed verification, it makes one more handshake to the same server that only records the
    /// chain the server presents (and then aborts), checks that chain with swift-certificates against the roots the
    /// request trusts, and names the cause only when the check shows it:
    ///
    /// - `CourierError.Code.certificateExpired` when a path from the leaf to a trusted root (a pinned one, on a
    ///   pinned host), every signature on it verified, has a certificate out of its validity period: an expired
    ///   certificate elsewhere in the chain (an old cross-sign a server still sends) says nothing. Where the system's
    ///   roots are not files (Apple platforms), when the leaf itself is;
    /// - `CourierError.Code.pinMismatch` on a pinned host when the chain leads to a root that is not pinned (one the
    ///   request would otherwise trust, or one the chain carries itself), contains no pinned key, and no pinned
    ///   root signed any of its certificates.
    ///
    /// Otherwise (a chain that leads nowhere known, such as one missing its intermediate; a chain swift-certificates
    /// cannot read or finds valid) the error stays `CourierError.Code.untrustedCertificate`, which is true of every
    /// chain that failed verification. It runs only on that failure path, and never sends a request byte.
    enum TLSDiagnosis {
        /// A certificate as the diagnosis reads it: parsed by swift-certificates, with its SPKI pin.
        struct Held: Sendable {
            let certificate: Certificate
            /// The base64 SHA-256 of its DER SubjectPublicKeyInfo (`TLSOptions.PinSet`'s form).
            let pin: String

            init?(_ certificate: NIOSSLCertificate) {
                guard let parsed = try? Certificate(derEncoded: certificate.toDERBytes()),
                    let spki = try? certificate.extractPublicKey().toSPKIBytes()
                else { return nil }
                self.certificate = parsed
                self.pin = Data(SHA256.hash(spki)).base64EncodedString()
            }
        }

        /// What the presented chain shows went wrong, when it shows more than "untrusted".
        enum Cause: Equatable {
            case expired
            case pinMismatch
        }

        /// `error` with the cause the presented chain shows, or `error` itself when it shows none.
        ///
        /// - Parameter base: The TLS configuration the transport's requests start from (its roots stand for "the
        ///   system's"); `nil` for ``TLSMapping/baseConfiguration``. A transport on a client passed in has a TLS
        ///   configuration Courier cannot read: the system's roots stand for its roots then.
        static func refine(
            _ error: CourierError, host: String, port: Int, options: TLSOptions, base: TLSConfiguration?
        ) async -> CourierError {
            guard error.code == .untrustedCertificate,
                let presented = await presentedChain(host: host, port: port, timeout: .seconds(2)), !presented.isEmpty
            else { return error }
            // A certificate swift-certificates cannot read: the chain cannot be followed, so nothing can be told.
            let chain = presented.compactMap(Held.init)
            guard chain.count == presented.count else { return error }
            // swift-certificates tries every path through the intermediates, with no bound and no cancellation: a
            // server presenting many cross-signed certificates would hold the call (and a core) for a long time.
            // Real chains have a leaf, an intermediate or two and sometimes a cross-sign.
            guard chain.count <= maxDiagnosedChainLength,
                Set(chain.map { "\($0.certificate.subject)\($0.pin)" }).count == chain.count
            else { return error }
            let roots = trustedRoots(options, base: base ?? TLSMapping.baseConfiguration)
            var refined = error
            switch await cause(of: chain, roots: roots, pins: options.pinSet(for: host)?.pins) {
            case .expired:
                refined.code = .certificateExpired
                refined.message =
                    "the server's certificate (or one on its path to a trusted root) has expired or is not yet valid"
            case .pinMismatch:
                refined.code = .pinMismatch
                refined.message = "the server's certificate chain leads to none of the keys pinned for \(host)"
            case nil:
                break
            }
            return refined
        }

        /// The longest presented chain the diagnosis follows; a longer one stays `untrustedCertificate`.
        static let maxDiagnosedChainLength = 6

        /// What `chain` (leaf first, as presented) shows went wrong, verified against `roots` (the roots the request
        /// trusts before pins narrow them) and `pins`; `nil` when it shows nothing more specific than an untrusted
        /// chain.
        static func cause(of chain: [Held], roots: [Held], pins: Set<String>?) async -> Cause? {
            guard let pins else {
                return await isExpired(chain, anchors: roots) ? .expired : nil
            }
            // AsyncHTTPClient enforces pins by trusting only the pinned roots (see `TLSMapping`).
            let anchors = roots.filter { pins.contains($0.pin) }
            let leadsToPin =
                chain.contains { pins.contains($0.pin) }
                || chain.contains { held in
                    anchors.contains {
                        $0.certificate.publicKey.isValidSignature(held.certificate.signature, for: held.certificate)
                    }
                }
            if leadsToPin {
                // The pins hold: what failed is something else.
                return await isExpired(chain, anchors: anchors) ? .expired : nil
            }
            // Only a chain that is known to end elsewhere is a mismatch: one missing its intermediate may well lead
            // to the pinned root.
            let ownRoots = chain.filter { isSelfSigned($0.certificate) }
            return await reachesRoot(chain, anchors: roots + ownRoots) ? .pinMismatch : nil
        }

        /// Whether a path from `chain`'s leaf to one of `anchors`, every signature on it verified, has a certificate
        /// out of its validity period now. (Whether it would meet every other rule at another time is not asked:
        /// swift-certificates offers a fixed validation time only as SPI, which a minor release may change.) With no
        /// anchors to follow (Apple platforms, whose roots are in the keychain, not in files), whether the leaf is.
        private static func isExpired(_ chain: [Held], anchors: [Held]) async -> Bool {
            let now = Date()
            func outOfValidity(_ certificate: Certificate) -> Bool {
                certificate.notValidAfter < now || certificate.notValidBefore > now
            }
            guard !anchors.isEmpty else { return chain.first.map { outOfValidity($0.certificate) } ?? false }
            guard case .couldNotValidate(let failures) = await validate(chain, anchors: anchors) else { return false }
            // Each failure is a path to an anchor whose signatures verify but that broke a rule of the policy.
            return failures.contains { $0.chain.contains(where: outOfValidity) }
        }

        /// Whether `chain`'s leaf leads, through its certificates, to one of `anchors` with every signature verified,
        /// whether or not the path also meets RFC 5280's rules now.
        private static func reachesRoot(_ chain: [Held], anchors: [Held]) async -> Bool {
            switch await validate(chain, anchors: anchors) {
            case .validCertificate: true
            case .couldNotValidate(let failures): !failures.isEmpty
            }
        }

        /// swift-certificates' verdict on `chain` (leaf first) with `anchors` as the roots, now.
        private static func validate(_ chain: [Held], anchors: [Held]) async -> CertificateValidationResult {
            var verifier = Verifier(rootCertificates: CertificateStore(anchors.map(\.certificate))) { RFC5280Policy() }
            guard let leaf = chain.first else { return .couldNotValidate([]) }
            return await verifier.validate(
                leaf: leaf.certificate, intermediates: CertificateStore(chain.dropFirst().map(\.certificate)))
        }

        private static func isSelfSigned(_ certificate: Certificate) -> Bool {
            certificate.issuer == certificate.subject
                && certificate.publicKey.isValidSignature(certificate.signature, for: certificate)
        }

        /// The roots the request trusts before pins narrow them: its own (`TLSOptions.Trust`), and, unless it trusts
        /// only those, what stands for the system's (`base`'s roots). The same set `TLSMapping` picks pinned roots
        /// from.
        static func trustedRoots(_ options: TLSOptions, base: TLSConfiguration) -> [Held] {
            let own = options.trust.certificates.compactMap { try? NIOSSLCertificate(bytes: $0.der, format: .der) }
            let roots = own.compactMap(Held.init)
            guard options.trust.includesSystemRoots else { return roots }
            // The system's roots are read once; a configuration's own are read as `TLSMapping` reads them.
            if case .default = base.trustRoots ?? .default, base.additionalTrustRoots.isEmpty {
                return roots + systemRoots
            }
            return roots + TLSMapping.roots(of: base).compactMap(Held.init)
        }

        /// ``SystemRoots``, read by swift-certificates once.
        private static let systemRoots = SystemRoots.certificates.compactMap(Held.init)

        /// The chain `host`:`port` presents, or `nil` when no handshake got that far within `timeout`.
        private static func presentedChain(host: String, port: Int, timeout: TimeAmount) async -> [NIOSSLCertificate]? {
            let recorded = LockedBox<[NIOSSLCertificate]?>(nil)
            await probe(host: host, port: port, timeout: timeout, configuration: TLSMapping.baseConfiguration) {
                serverName, context in
                [
                    try NIOSSLClientHandler(
                        context: context,
                        serverHostname: serverName,
                        customVerificationCallback: { certificates, promise in
                            recorded.withLock { $0 = certificates }
                            promise.succeed(.failed)
                        }
                    )
                ]
            }
            return recorded.withLock { $0 }
        }

        /// Whether `host`:`port` refuses a client that presents no certificate.
        ///
        /// Under TLS 1.3 the client's handshake ends before the server checks the client's certificate, and
        /// AsyncHTTPClient reports the server's `certificate_required` alert only as a closed connection, which looks
        /// like a stale keep-alive connection. So after a second reset in a row on one call, one handshake without a
        /// certificate is made (no request byte is sent; the server's chain is not checked, as nothing is trusted from
        /// it) and waits for that alert.
        static func requiresClientCertificate(host: String, port: Int, timeout: TimeAmount) async -> Bool {
            let alerted = LockedBox(false)
            var configuration = TLSMapping.baseConfiguration
            configuration.certificateVerification = .none
            await probe(host: host, port: port, timeout: timeout, configuration: configuration) { serverName, context in
                [try NIOSSLClientHandler(context: context, serverHostname: serverName), AlertWatcher(alerted: alerted)]
            }
            return alerted.withLock { $0 }
        }

        /// Connects to `host`:`port` with the handlers `makeHandlers` returns, and waits until the channel closes or
        /// `timeout` passes. Sends no request: the handlers only watch the handshake.
        private static func probe(
            host: String,
            port: Int,
            timeout: TimeAmount,
            configuration: TLSConfiguration,
            _ makeHandlers: @escaping @Sendable (String?, NIOSSLContext) throws -> [any ChannelHandler]
        ) async {
            do {
                let context = try NIOSSLContext(configuration: configuration)
                let serverName = isIPAddress(host) ? nil : host
                let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .connectTimeout(timeout)
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandlers(try makeHandlers(serverName, context))
                        }
                    }
                    .connect(host: host, port: port)
                    .get()
                let deadline = channel.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
                try? await channel.closeFuture.get()
                deadline.cancel()
            } catch {
                return
            }
        }

        /// Notes a `certificate_required` (TLS 1.3) or `handshake_failure`-for-a-certificate alert, then closes.
        private final class AlertWatcher: ChannelInboundHandler, Sendable {
            typealias InboundIn = ByteBuffer
            let alerted: LockedBox<Bool>

            init(alerted: LockedBox<Bool>) { self.alerted = alerted }

            func errorCaught(context: ChannelHandlerContext, error: any Error) {
                let text = String(describing: error).uppercased()
                if text.contains("CERTIFICATE_REQUIRED") || text.contains("PEER_DID_NOT_RETURN_A_CERTIFICATE") {
                    alerted.withLock { $0 = true }
                }
                context.close(promise: nil)
            }
        }

        private static func isIPAddress(_ host: String) -> Bool {
            host.contains(":") || host.split(separator: ".").allSatisfy { UInt8($0) != nil }
        }
    }
#endif
