#if AsyncHTTPClient
    import CourierCore
    import NIOSSL

    /// A TLS failure, classified into the `CourierError.Code` that names its cause.
    struct TLSFailure: Error, Sendable {
        let code: CourierError.Code
        let message: String

        /// The TLS failure `error` stands for, or `nil` when it is not one.
        static func classify(_ error: any Error) -> TLSFailure? {
            if let error = error as? TLSFailure { return error }
            if let error = error as? NIOSSLExtraError {
                if error == .failedToValidateHostname || error == .serverHostnameImpossibleToMatch {
                    return TLSFailure(
                        code: .hostnameMismatch, message: "the server's certificate is not valid for the host name")
                }
                return TLSFailure(code: .tlsHandshakeFailed, message: "the TLS handshake failed (\(error))")
            }
            guard let error = error as? NIOSSLError else { return nil }
            switch error {
            case .handshakeFailed(let reason):
                return classify(handshake: String(describing: reason))
            case .uncleanShutdown:
                return nil
            default:
                return TLSFailure(code: .tlsHandshakeFailed, message: "TLS failed (\(error))")
            }
        }

        /// Reads BoringSSL's error names (they are stable identifiers such as `CERTIFICATE_VERIFY_FAILED`).
        static func classify(handshake text: String) -> TLSFailure {
            let upper = text.uppercased()
            if upper.contains("CERTIFICATE_REQUIRED") || upper.contains("ALERT_BAD_CERTIFICATE")
                || upper.contains("ALERT_UNKNOWN_CA") || upper.contains("ALERT_CERTIFICATE_UNKNOWN")
                || upper.contains("ALERT_ACCESS_DENIED")
            {
                return TLSFailure(
                    code: .clientCertificateRejected,
                    message: "the server rejected the client certificate, or required one and none was sent")
            }
            // An alert the server sent about the client's certificate (BoringSSL names a received alert
            // `SSLV3_ALERT_…`); the client's own verdict on the server's certificate is CERTIFICATE_VERIFY_FAILED.
            for (alert, reason) in [
                ("ALERT_CERTIFICATE_EXPIRED", "it has expired"), ("ALERT_CERTIFICATE_REVOKED", "it has been revoked"),
                ("ALERT_UNSUPPORTED_CERTIFICATE", "its type is not supported"),
            ] where upper.contains(alert) {
                return TLSFailure(
                    code: .clientCertificateRejected, message: "the server rejected the client certificate: \(reason)")
            }
            if upper.contains("CERTIFICATE_EXPIRED") || upper.contains("CERTIFICATE_HAS_EXPIRED") {
                return TLSFailure(code: .certificateExpired, message: "the server's certificate has expired")
            }
            if upper.contains("CERTIFICATE_VERIFY_FAILED") {
                return TLSFailure(
                    code: .untrustedCertificate,
                    message: "the server's certificate is not trusted (verification failed)")
            }
            if upper.contains("PROTOCOL_VERSION") || upper.contains("UNSUPPORTED_PROTOCOL") {
                return TLSFailure(
                    code: .tlsHandshakeFailed,
                    message: "the server and the client share no TLS version (the client accepts "
                        + "TLSOptions.minimumVersion or later: TLS 1.2 unless lowered)")
            }
            return TLSFailure(code: .tlsHandshakeFailed, message: "the TLS handshake failed")
        }
    }
#endif
