import AsyncHTTPClient
import Courier
import NIOSSL

extension ServerHost.Endpoint {
    /// What a raw `HTTPClient` needs to reach a TLS endpoint: the trust and the HTTP versions to offer.
    struct ClientTLS: Sendable {
        /// TLS 1.2 or later (as ``CourierAsyncHTTPClient/AsyncHTTPClientTransport``'s), trusting the root alone.
        let configuration: TLSConfiguration
        /// `.http1Only` for ``WireProtocol/https``, `.automatic` (h2 when offered) for ``WireProtocol/h2``.
        let httpVersion: HTTPClient.Configuration.HTTPVersion
    }

    /// The raw `HTTPClient` settings for this endpoint; `nil` for plain HTTP.
    ///
    /// - Throws: ``ClientTLSError/invalidRoot(_:)`` when the root does not parse.
    func clientTLS() throws -> ClientTLS? {
        guard wire.isSecure, let rootCertificatePEM else { return nil }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        do {
            configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(rootCertificatePEM.utf8)))
        } catch {
            throw ClientTLSError.invalidRoot("\(error)")
        }
        return ClientTLS(configuration: configuration, httpVersion: wire == .https ? .http1Only : .automatic)
    }

    /// Courier's options for this endpoint: only its root trusted, HTTP/1.1 only for ``WireProtocol/https``;
    /// `nil` for plain HTTP (the defaults, Courier's fastest path).
    ///
    /// - Throws: ``ClientTLSError/invalidRoot(_:)`` when the root does not parse.
    func courierTLSOptions() throws -> TLSOptions? {
        guard wire.isSecure, let rootCertificatePEM else { return nil }
        var options: TLSOptions
        do {
            options = TLSOptions(trust: .only(try TLSOptions.Certificate.pem(rootCertificatePEM)))
        } catch {
            throw ClientTLSError.invalidRoot("\(error)")
        }
        options.httpVersions = wire == .https ? .http1Only : .automatic
        return options
    }
}

/// Why a client could not be made for an endpoint.
enum ClientTLSError: Error, CustomStringConvertible {
    /// The root certificate the server reported does not parse.
    case invalidRoot(String)
    /// The client cannot speak the protocol (see ``WireProtocol/supports(_:)``).
    case unsupported(ClientKind, WireProtocol)

    var description: String {
        switch self {
        case .invalidRoot(let reason): "the server's root certificate does not parse: \(reason)"
        case .unsupported(let kind, let wire): "\(kind.rawValue) cannot be measured over \(wire.rawValue)"
        }
    }
}
