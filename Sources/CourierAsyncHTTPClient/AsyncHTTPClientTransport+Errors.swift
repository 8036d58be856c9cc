#if AsyncHTTPClient
    import AsyncHTTPClient
    import CourierCore
    import Foundation
    import NIOCore
    import NIOHTTP1
    import NIOHTTP2
    import NIOHTTPCompression
    import NIOPosix
    import NIOSSL

    extension AsyncHTTPClientTransport {
        /// Where in the exchange an error happened: it decides between a connection failure and a cut-short body.
        enum Phase {
            /// Connecting, sending, or waiting for the response head.
            case head
            /// Reading the body after the head arrived.
            case body
        }

        /// Maps AsyncHTTPClient and NIO errors to `CourierError` codes; cancellation stays `CancellationError`.
        ///
        /// Messages name the failure in Courier's words, never the underlying error's text (which may carry a URL):
        /// the error itself stays available as `CourierError.underlyingError`.
        static func translate(_ error: any Error, phase: Phase, timeouts: Timeouts) -> any Error {
            if error is CancellationError || error is CourierError { return error }
            func fail(_ code: CourierError.Code, _ message: String) -> CourierError {
                CourierError(code: code, stage: .transport, message: message, underlyingError: error)
            }
            /// A failure before the request had a connection: nothing of it was sent.
            func unsent(_ code: CourierError.Code, _ message: String) -> CourierError {
                CourierError(
                    code: code, stage: .transport, message: message, underlyingError: error, isKnownUnsent: true)
            }
            let lost: (CourierError.Code, String) =
                phase == .body
                ? (.truncatedResponse, "truncated: the connection ended before the body was complete")
                : (.connectionReset, "the connection was closed before a response arrived")
            if let error = error as? HTTPClientError {
                switch error {
                case .cancelled, .requestStreamCancelled:
                    // AsyncHTTPClient also cancels a request itself, for instance one waiting on an HTTP/2 connection
                    // that received GOAWAY: that is a lost connection to the caller, not a cancellation of theirs.
                    if Task.isCancelled { return CancellationError() }
                    return fail(lost.0, "AsyncHTTPClient gave up the request while its connection was closing")
                case .connectTimeout:
                    return unsent(.connectTimeout, "no connection within \(timeouts.connectText)")
                case .tlsHandshakeTimeout:
                    return unsent(.connectTimeout, "the TLS handshake did not finish within the connect timeout")
                case .deadlineExceeded:
                    return fail(.timedOut, "the call did not finish within its deadline")
                case .readTimeout:
                    return fail(.idleTimeout, "no byte arrived for \(timeouts.idleText)")
                case .writeTimeout:
                    return fail(.idleTimeout, "the request could not be written within the write timeout")
                case .getConnectionFromPoolTimeout:
                    return unsent(.connectTimeout, "no pooled connection became free within the connect timeout")
                case .remoteConnectionClosed, .uncleanShutdown:
                    return fail(lost.0, lost.1)
                case .bodyLengthMismatch:
                    // AsyncHTTPClient raises it for the request body only (its state machine counts the bytes sent
                    // against the declared length): the request is at fault, not the server, and not worth a retry.
                    return fail(.invalidBody, "the request body's length does not match the length it declared")
                case .identityCodingIncorrectlyPresent, .contentLengthMissing:
                    return fail(.malformedResponse, "the response's framing is invalid")
                case .proxyAuthenticationRequired:
                    return fail(
                        .proxyAuthenticationRequired,
                        "the proxy answered 407 Proxy Authentication Required: its credentials are missing or wrong")
                case .invalidProxyResponse:
                    return fail(.proxyFailed, "the proxy refused to open a tunnel to the server")
                case .httpProxyHandshakeTimeout:
                    return unsent(.connectTimeout, "the proxy did not open a tunnel within \(timeouts.connectText)")
                case .traceRequestWithBody:
                    return fail(.invalidBody, "a TRACE request must not have a body")
                default:
                    return fail(.transportFailed, "AsyncHTTPClient failed (\(error.shortName))")
                }
            }
            if let error = error as? NIOHTTPDecompression.DecompressionError {
                guard case .limit = error else {
                    // zlib refused the data (`inflationError`), or could not start (`initializationError`).
                    return fail(.malformedResponse, "the compressed body is corrupt (\(error))")
                }
                return fail(.decompressionLimit, "the compressed body inflates past the decompression limit")
            }
            if let error = error as? NIOHTTPDecompression.ExtraDecompressionError {
                // `truncatedData`: the body ended inside the compressed stream; `invalidTrailingData`: bytes after it.
                return fail(.malformedResponse, "the compressed body is cut short or corrupt (\(error))")
            }
            if let error = error as? HTTPParserError {
                if phase == .body, case .invalidEOFState = error {
                    return fail(.truncatedResponse, "truncated: the connection ended before the body was complete")
                }
                return fail(.malformedResponse, "the response is not valid HTTP/1.1 (\(error))")
            }
            if let error = error as? NIOConnectionError {
                // Every attempt to connect failed: the request never had a connection to go out on.
                return classify(error, fail: unsent)
            }
            if let error = error as? IOError {
                return classify(errno: error.errnoCode, phase: phase, lost: lost, fail: fail, unsent: unsent)
            }
            if let error = error as? ChannelError {
                switch error {
                case .connectTimeout:
                    return unsent(.connectTimeout, "no connection within \(timeouts.connectText)")
                case .eof, .ioOnClosedChannel, .alreadyClosed, .outputClosed, .inputClosed:
                    return fail(lost.0, lost.1)
                default:
                    return fail(.connectionFailed, "the connection failed (\(error))")
                }
            }
            if let closed = error as? NIOHTTP2Errors.StreamClosed {
                // One stream ended, not the connection: as a reset connection on HTTP/1.1. NIOHTTP2 reports a stream
                // that a GOAWAY's lower last stream ID dropped as CANCEL, not REFUSED_STREAM, so such a refusal reads
                // like any other reset.
                if closed.errorCode == .refusedStream, phase == .head {
                    // RFC 9113 §8.7: the server did not process the request, which can be sent again whatever its
                    // method (an overloaded Envoy, a server past its stream limit).
                    return unsent(
                        .connectionReset,
                        "the server refused the HTTP/2 stream without processing the request (REFUSED_STREAM)")
                }
                let message =
                    "the server reset the HTTP/2 stream, or ended the connection with GOAWAY, before a response arrived"
                return fail(lost.0, phase == .body ? lost.1 : message)
            }
            if error is NIOHTTP2Errors.ContentLengthViolated {
                // NIOHTTP2 checks a stream's DATA against its Content-Length: the stream ended short of it (the usual
                // case, as a cut HTTP/1.1 body), or ran past it. Either way the body is not the one announced.
                return fail(
                    .truncatedResponse,
                    "the HTTP/2 stream's body did not match its Content-Length (cut short, or longer than announced)")
            }
            if let error = error as? NIOSSLError, case .uncleanShutdown = error {
                // AsyncHTTPClient passes NIOSSL's own error on for a body that ends with the connection (no
                // Content-Length): without close_notify, nothing says the body is whole (a truncation attack).
                return fail(lost.0, lost.1 + " (no TLS close_notify)")
            }
            if let error = error as? NIOSSLError, case .handshakeFailed(.sslError(let stack)) = error,
                stack.contains(where: {
                    $0 == .eofDuringHandshake || $0 == .eofDuringAdditionalCertficiateChainValidation
                })
            {
                // A load balancer mid-rollout or a server at its connection limit accepts, then closes before its
                // ServerHello: as a reset connection, and nothing of the request went out before TLS was up.
                return unsent(.connectionReset, "the server closed the connection during the TLS handshake")
            }
            if let tls = TLSFailure.classify(error) {
                return fail(tls.code, tls.message)
            }
            if let error = error as? BoringSSLError {
                // BoringSSL's own error on a read after the handshake, passed on as it is over HTTP/1.1: over TLS 1.3
                // the server's alert refusing the client certificate comes then; anything else ends the connection.
                let tls = TLSFailure.classify(handshake: String(describing: error))
                if tls.code == .clientCertificateRejected { return fail(tls.code, tls.message) }
                return fail(lost.0, lost.1 + " (TLS failed)")
            }
            return fail(.transportFailed, "the transport failed (\(String(describing: type(of: error))))")
        }

        /// A failed connection attempt: refused, unreachable, or a name that did not resolve.
        private static func classify(
            _ error: NIOConnectionError,
            fail: (CourierError.Code, String) -> CourierError
        ) -> CourierError {
            let errnos = error.connectionErrors.compactMap { ($0.error as? IOError)?.errnoCode }
            if error.connectionErrors.isEmpty {
                if error.dnsAError != nil || error.dnsAAAAError != nil {
                    return fail(.hostNotFound, "the host name could not be resolved")
                }
                return fail(.connectionFailed, "no address to connect to")
            }
            if errnos.contains(ECONNREFUSED) {
                return fail(.connectionRefused, "the server refused the connection (nothing listens on the port)")
            }
            if errnos.contains(where: { $0 == ENETUNREACH || $0 == EHOSTUNREACH || $0 == ENETDOWN }) {
                return fail(.networkUnreachable, "no route to the server's address")
            }
            if errnos.contains(ETIMEDOUT) {
                return fail(.connectTimeout, "the connection attempt timed out")
            }
            if errnos.contains(ECONNRESET) {
                return fail(.connectionReset, "the connection was reset while connecting")
            }
            return fail(.connectionFailed, "could not connect")
        }

        private static func classify(
            errno: CInt,
            phase: Phase,
            lost: (CourierError.Code, String),
            fail: (CourierError.Code, String) -> CourierError,
            unsent: (CourierError.Code, String) -> CourierError
        ) -> CourierError {
            switch errno {
            case ECONNREFUSED:
                // A connect to an IP address is refused with this IOError (not `NIOConnectionError`): a reset in
                // answer to the SYN. On an established socket Linux reports a refusal only for an ICMP
                // port-unreachable once its retransmissions gave up (`tcp_write_err`, about 15 minutes), which the
                // idle timeout (60 s by default) ends long before; only without one could that be a request sent.
                return unsent(.connectionRefused, "the server refused the connection (nothing listens on the port)")
            case ENETUNREACH, EHOSTUNREACH, ENETDOWN:
                return fail(.networkUnreachable, "no route to the server's address")
            case ECONNRESET, EPIPE, ECONNABORTED:
                return fail(lost.0, phase == .body ? lost.1 : "the connection was reset before a response arrived")
            case ETIMEDOUT:
                // A connection attempt's failure arrives as NIOConnectionError: this one timed out once connected
                // (the peer stopped acknowledging), when the request may have been sent.
                return fail(lost.0, "the connection timed out: the server stopped acknowledging (TCP timeout)")
            default:
                return fail(.connectionFailed, "the connection failed (errno \(errno))")
            }
        }

        /// The timeouts an error message may name.
        struct Timeouts: Sendable {
            var connect: Duration?
            var idle: Duration?

            /// "the connect timeout (10 seconds)", or without the value when it is not known.
            var connectText: String { connect.map { "the connect timeout (\($0))" } ?? "the connect timeout" }
            /// "60 seconds (idle timeout)", or "the idle timeout" when the value is not known.
            var idleText: String { idle.map { "\($0) (idle timeout)" } ?? "the idle timeout" }
        }
    }

    extension HTTPClientError {
        /// The error's case name without associated text (which may hold a URL).
        fileprivate var shortName: String {
            let text = String(describing: self)
            return String(text.prefix { $0 != "(" && $0 != ":" }).trimmingCharacters(in: .whitespaces)
        }
    }
#endif
