import CourierCore
import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionTransport {
    /// Maps an error URLSession reported to what Courier throws; the `URLError` stays the underlying error.
    ///
    /// - Parameters:
    ///   - response: The head, if it had arrived: an error after it means the body was cut short.
    ///   - received: Body bytes received so far.
    ///   - expected: The body's length, when known.
    static func map(_ error: any Error, response: HTTPResponse?, received: Int64, expected: Int64?) -> any Error {
        guard let urlError = error as? URLError else {
            return CourierError(
                code: .transportFailed, stage: .transport, message: "URLSession failed", response: response,
                underlyingError: error)
        }
        func failure(_ code: CourierError.Code, _ message: String, unsent: Bool = false) -> CourierError {
            CourierError(
                code: code, stage: .transport, message: message, response: response, underlyingError: error,
                isKnownUnsent: unsent)
        }
        let texts = errorTexts(urlError)
        if response == nil, let (code, message) = tlsFailure(in: texts) {
            return failure(code, message)
        }
        if response == nil, let (code, message) = socketFailure(in: texts) {
            // libcurl names a failed connect "Failed to connect to …" (`CURLE_COULDNT_CONNECT`): nothing was sent.
            let connectFailed = texts.contains { $0.contains("failed to connect") || $0.contains("couldn't connect") }
            return failure(code, message, unsent: code == .networkUnreachable && connectFailed)
        }
        switch urlError.code {
        case .cancelled:
            return CancellationError()
        case .timedOut:
            return failure(.idleTimeout, "no byte arrived within URLSession's request timeout (idle timeout)")
        // No connection was made for these: nothing of the request was sent (unless URLSession resent it itself,
        // which `ResponseTask` accounts for).
        case .cannotConnectToHost where response == nil && refusalNamed(in: texts):
            return failure(
                .connectionRefused, "the server refused the connection (nothing listens on the port)", unsent: true)
        case .cannotFindHost, .dnsLookupFailed:
            return failure(.hostNotFound, "the host name could not be resolved", unsent: true)
        case .notConnectedToInternet:
            // Not marked unsent: CFNetwork may report it for a request in flight when the network goes away.
            return failure(.notConnectedToInternet, "the device is not connected to a network")
        case .secureConnectionFailed:
            #if canImport(FoundationNetworking)
                return failure(.untrustedCertificate, "the server's certificate is not trusted")
            #else
                // Apple's -1200 is any failed handshake (TLS version, cipher); an untrusted certificate is -1202.
                return failure(.tlsHandshakeFailed, "the TLS handshake failed (URLError -1200)")
            #endif
        case .serverCertificateUntrusted, .serverCertificateHasUnknownRoot:
            return failure(.untrustedCertificate, "the server's certificate is not trusted")
        case .serverCertificateHasBadDate, .serverCertificateNotYetValid:
            return failure(.certificateExpired, "the server's certificate has expired or is not yet valid")
        case .clientCertificateRejected, .clientCertificateRequired:
            return failure(.clientCertificateRejected, "the server rejected the client certificate")
        case .networkConnectionLost, .unknown, .cannotParseResponse, .badServerResponse, .cannotConnectToHost:
            // `cannotConnectToHost` here only on Linux, and not a refused connect (`refusalNamed(in:)`).
            if texts.contains(where: { $0.contains("content encoding") }) {
                // libcurl refuses a chain of more than 5 codings, or one it does not know, before the head.
                return failure(.unsupported, "unsupported: the response's content codings cannot be decoded")
            }
            if response == nil,
                texts.contains(where: { $0.contains("too large response headers") })
                    || (urlError.code == .unknown && texts.contains(where: { $0.contains("out of memory") }))
            {
                // libcurl's limit on a response's header section (300 KiB; a single field past 100 KiB it reports
                // as out of memory): the server's answer, which it would send again, so not a lost connection.
                return failure(
                    .malformedResponse,
                    "the response's header section is larger than libcurl accepts (300 KiB, 100 KiB per field)")
            }
            if texts.contains(where: { $0.contains("content unencoding") }) {
                // zlib refused the data ("Error while processing content unencoding: invalid block type"): the
                // server's body is at fault, and sending the request again would get the same bytes.
                return failure(
                    .malformedResponse, "the compressed body is corrupt (URLError \(urlError.code.rawValue))")
            }
            guard response != nil else {
                return failure(
                    [.networkConnectionLost, .unknown, .cannotConnectToHost].contains(urlError.code)
                        ? .connectionReset : .malformedResponse,
                    "the connection failed before a response (URLError \(urlError.code.rawValue))"
                )
            }
            // FoundationNetworking reports a body shorter than its Content-Length as NSURLErrorUnknown.
            let of = expected.map { " of \($0)" } ?? ""
            return failure(.truncatedResponse, "truncated: the body ended after \(received)\(of) bytes")
        default:
            return failure(.transportFailed, "URLSession failed (\(urlError.code.rawValue))")
        }
    }

    /// Whether a `cannotConnectToHost` is a connect that failed, so that nothing was sent.
    ///
    /// On Apple platforms it is. FoundationNetworking reports any libcurl failure with that code when the socket's
    /// last `errno` is `ECONNREFUSED`, which a refused connect to one of a host's addresses leaves behind after
    /// another address accepted (`localhost`: `::1` refused, `127.0.0.1` answered): a connection reset or a cut body
    /// after that is no refusal, and a POST taken for unsent was sent again. There, only libcurl's own text for a
    /// failed connect (`CURLE_COULDNT_CONNECT`) says nothing was sent.
    static func refusalNamed(in texts: [String]) -> Bool {
        #if canImport(FoundationNetworking)
            texts.contains { $0.contains("failed to connect") || $0.contains("couldn't connect") }
        #else
            true
        #endif
    }

    /// The error's texts, lowercased: its description and its underlying error's (FoundationNetworking keeps
    /// libcurl's message there: "Unrecognized content encoding type", "Error while processing content unencoding").
    static func errorTexts(_ error: URLError) -> [String] {
        var texts: [String] = [error.localizedDescription]
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError {
            texts.append(underlying.localizedDescription)
        }
        if let text = error.userInfo[NSLocalizedDescriptionKey] as? String { texts.append(text) }
        return texts.map { $0.lowercased() }
    }

    /// The connection failure libcurl's message names where FoundationNetworking's code does not: it reports a
    /// closed connection with no response ("Empty reply from server") as `badServerResponse`, and any connect
    /// failure but a refusal or a timeout as `NSURLErrorUnknown`.
    static func socketFailure(in texts: [String]) -> (CourierError.Code, String)? {
        func has(_ fragments: String...) -> Bool { texts.contains { text in fragments.contains(where: text.contains) } }
        if has("empty reply from server") {
            return (.connectionReset, "the server closed the connection without a response")
        }
        if has("no route to host", "network is unreachable", "host is unreachable") {
            return (.networkUnreachable, "no route to the server's network")
        }
        return nil
    }

    /// The TLS failure libcurl's message names (FoundationNetworking reports most of them as `NSURLErrorUnknown`
    /// with libcurl's text), or `nil`.
    static func tlsFailure(in texts: [String]) -> (CourierError.Code, String)? {
        func has(_ fragments: String...) -> Bool { texts.contains { text in fragments.contains(where: text.contains) } }
        if has("certificate has expired", "certificate is not yet valid") {
            return (.certificateExpired, "the server's certificate has expired or is not yet valid")
        }
        if has("subject name", "does not match target host", "no alternative certificate") {
            return (.hostnameMismatch, "the server's certificate is not valid for the host name")
        }
        if has("alert certificate required", "alert bad certificate", "alert unknown ca", "alert access denied") {
            return (.clientCertificateRejected, "the server rejected the client certificate, or required one")
        }
        if has(
            "self-signed", "self signed", "local issuer", "unable to verify", "certificate verify failed",
            "ssl certificate problem")
        {
            return (.untrustedCertificate, "the server's certificate is not trusted")
        }
        if has(
            "protocol version", "unsupported protocol", "wrong version number", "no protocols available",
            "ssl connect error", "handshake failure")
        {
            return (.tlsHandshakeFailed, "the TLS handshake failed (no common TLS version or cipher)")
        }
        return nil
    }
}
