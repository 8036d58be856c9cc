#if AsyncHTTPClient
    import CourierCore
    import Foundation
    import NIOCore
    import NIOPosix
    import NIOSSL

    /// Finds out why a server's certificate was refused, when BoringSSL only said "verification failed".
    ///
    /// After a handshake failed verification, it makes one more handshake to the same server that only records the
    /// chain the server presents (and then aborts), and names the cause: a certificate out of its validity period
    /// (`CourierError.Code.certificateExpired`), a chain that contains none of the host's pinned keys
    /// (`CourierError.Code.pinMismatch`), or else an untrusted chain
    /// (`CourierError.Code.untrustedCertificate`). It runs only on that failure path, and never sends a
    /// request byte.
    enum TLSDiagnosis {
        static func refine(_ error: CourierError, host: String, port: Int, options: TLSOptions) async -> CourierError {
            guard error.code == .untrustedCertificate,
                let chain = await presentedChain(host: host, port: port, timeout: .seconds(2)), !chain.isEmpty
            else { return error }
            var refined = error
            let now = time(nil)
            if chain.contains(where: { $0.notValidAfter < now || $0.notValidBefore > now }) {
                refined.code = .certificateExpired
                refined.message = "the server's certificate (or one in its chain) has expired or is not yet valid"
                return refined
            }
            if let pinSet = options.pinSet(for: host) {
                let keys = chain.compactMap { try? Data(SHA256.hash($0.extractPublicKey().toSPKIBytes())) }
                if !keys.contains(where: { pinSet.pins.contains($0.base64EncodedString()) }) {
                    refined.code = .pinMismatch
                    refined.message = "none of the keys in the server's certificate chain is pinned for \(host)"
                    return refined
                }
            }
            return refined
        }

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
