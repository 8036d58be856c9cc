#if TestServer
    /// How a ``TestServer`` speaks TLS: which authority's certificates it presents, how they are broken (or not), and
    /// which protocols it offers by ALPN.
    ///
    /// Pass it to ``TestServer/start(host:port:logger:tls:)``; the server then serves the same routes over HTTPS,
    /// HTTP/1.1 or HTTP/2 as the client negotiates.
    ///
    /// ```swift
    /// let authority = try TestCertificateAuthority()
    /// let server = try await TestServer.start(tls: .init(authority: authority, mode: .expired))
    /// ```
    public struct TestServerTLS: Sendable {
        /// What the server presents in its handshake, and what it asks of the client.
        ///
        /// Every mode but ``valid`` and ``clientCertificateRequired`` must make a client that trusts only the
        /// authority's ``TestCertificateAuthority/root`` (with default verification) fail the handshake.
        public enum Mode: Sendable, Hashable, CaseIterable {
            /// ``TestCertificateAuthority/serverCertificate``: `localhost`, `127.0.0.1` and `::1`, sent with the
            /// intermediate.
            case valid

            /// A leaf for `localhost`, `127.0.0.1` and `::1` from the authority whose validity ended a day ago (it
            /// began 30 days ago), sent with the intermediate.
            case expired

            /// A leaf from the authority for `wrong.example.test` only, sent with the intermediate: the chain is
            /// trusted, the name does not match.
            case wrongHost

            /// A self-signed leaf for `localhost` and `127.0.0.1`, from no authority.
            case selfSigned

            /// A leaf for `localhost`, `127.0.0.1` and `::1` chained (with its intermediate) to another root, made
            /// at start and trusted by nobody.
            case unknownCA

            /// ``TestCertificateAuthority/serverCertificate`` sent alone, without the intermediate, so a client
            /// that trusts the root cannot build the chain.
            case missingIntermediate

            /// The ``valid`` chain, and the handshake requires a client certificate that chains to the authority's
            /// root (hostname not checked), such as ``TestCertificateAuthority/clientCertificate`` sent with its
            /// intermediate. Without one, or with another, the server aborts the handshake.
            case clientCertificateRequired

            /// The ``valid`` chain, with TLS 1.1 as both the server's minimum and maximum version.
            ///
            /// BoringSSL (in swift-nio-ssl) still implements TLS 1.1, so this is a real TLS 1.1 server: a client
            /// that requires TLS 1.2 or later fails the handshake with a protocol-version alert, and a client that
            /// still allows 1.1 connects (with a CBC-SHA1 cipher suite). ALPN is offered as configured, but HTTP/2
            /// clients usually refuse h2 below TLS 1.2.
            case tls11Only
        }

        /// An application protocol offered by ALPN.
        public enum ApplicationProtocol: String, Sendable, Hashable {
            /// HTTP/2, ALPN identifier `h2`.
            case http2 = "h2"
            /// HTTP/1.1, ALPN identifier `http/1.1`; also what a client that sends no ALPN gets.
            case http1 = "http/1.1"
        }

        /// The authority whose certificates the server presents (and, with mTLS, whose root it trusts).
        public var authority: TestCertificateAuthority

        /// What the handshake presents and requires.
        public var mode: Mode

        /// The protocols offered by ALPN, in the server's order of preference.
        public var applicationProtocols: [ApplicationProtocol]

        /// When an HTTP/2 connection ends with a graceful `GOAWAY`; `nil` (the default) never: connections stay open
        /// until the client or ``TestServer/shutdown()`` closes them. HTTP/1.1 connections are not affected.
        public var goAway: GoAway?

        /// The most streams an HTTP/2 connection lets a client open at once (`SETTINGS_MAX_CONCURRENT_STREAMS`);
        /// 1,000 by default, so that a client's 100 concurrent calls never wait for a stream. A small number tests a
        /// client that must queue its calls, or open more connections, at the server's limit.
        public var maxConcurrentStreams = 1_000

        /// Creates a TLS configuration.
        ///
        /// - Parameters:
        ///   - authority: The authority whose certificates the server presents.
        ///   - mode: What the handshake presents and requires; ``Mode/valid`` by default.
        ///   - applicationProtocols: The protocols offered by ALPN; HTTP/2 then HTTP/1.1 by default, `[.http1]` for
        ///     an HTTP/1.1-only server.
        ///   - goAway: When an HTTP/2 connection says `GOAWAY`; never by default.
        public init(
            authority: TestCertificateAuthority,
            mode: Mode = .valid,
            applicationProtocols: [ApplicationProtocol] = [.http2, .http1],
            goAway: GoAway? = nil
        ) {
            self.authority = authority
            self.mode = mode
            self.applicationProtocols = applicationProtocols
            self.goAway = goAway
        }
    }
#endif
