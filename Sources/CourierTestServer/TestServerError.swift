#if TestServer
    /// Errors thrown by ``TestServer/start(host:port:logger:tls:)`` and ``TestCertificateAuthority``.
    public enum TestServerError: Error, Sendable, Equatable {
        /// The host is not a loopback address; the test server never listens anywhere else.
        case nonLoopbackHost(String)
        /// A subject alternative name meant as an IP address is neither a dotted IPv4 nor an IPv6 address.
        case invalidIPAddress(String)
    }
#endif
