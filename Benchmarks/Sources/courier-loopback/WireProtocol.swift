import CourierTestServer

/// How a cell's requests travel: plain HTTP/1.1, HTTP/1.1 over TLS, or HTTP/2 over TLS.
///
/// Each protocol has its own embedded server, so what a client negotiates is decided by the server as well as the
/// client: the `https` server offers only `http/1.1` by ALPN, the `h2` server offers `h2` then `http/1.1`. Both TLS
/// servers present certificates from one ``CourierTestServer/TestCertificateAuthority`` whose root the clients
/// trust alone.
enum WireProtocol: String, CaseIterable, Sendable, Hashable {
    /// HTTP/1.1 over plain TCP.
    case http
    /// HTTP/1.1 over TLS; clients offer only `http/1.1`.
    case https
    /// HTTP/2 over TLS, chosen by ALPN; clients offer `h2` then `http/1.1`.
    case h2

    /// Whether the connection is TLS.
    var isSecure: Bool { self != .http }

    /// The protocols the server offers by ALPN; `nil` for plain HTTP.
    var serverApplicationProtocols: [TestServerTLS.ApplicationProtocol]? {
        switch self {
        case .http: nil
        case .https: [.http1]
        case .h2: [.http2, .http1]
        }
    }

    /// The ALPN identifier every connection to this protocol's server must negotiate; `nil` for plain HTTP.
    var expectedApplicationProtocol: TestServerTLS.ApplicationProtocol? {
        switch self {
        case .http: nil
        case .https: .http1
        case .h2: .http2
        }
    }

    /// Whether `kind` can be measured over this protocol.
    ///
    /// The URLSession clients cannot: on Linux, swift-corelibs-foundation's `URLSession` cannot be told to trust a
    /// custom root (Courier's `URLSessionTransport` reports `unsupported` for custom trust roots), and the embedded
    /// server's root is not in the system's store. The delegate-API clients are measured over http only: they are a
    /// baseline for one question (what AsyncHTTPClient's older API costs per request), not a TLS client.
    func supports(_ kind: ClientKind) -> Bool {
        switch kind {
        case .courierAHC, .rawAHC, .rawAHCIdle, .rawAHCTask, .courierTransport, .openapiAHC, .openapiCourier,
            .courierInstant:
            true
        case .courierURLSession, .rawURLSession, .rawAHCDelegate, .rawAHCDelegateIdle: !isSecure
        }
    }
}
