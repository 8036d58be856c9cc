extension CourierError {
    /// What went wrong, as an extensible set of codes: new codes are not a breaking change.
    ///
    /// Compare with `==` against the static members: `error.code == .bodyTooLarge`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable, CaseIterable {
            case invalidURL, invalidHeader, invalidBody, encodingFailed, missingCredential
            case bodyNotReplayable, transportFailed, connectionFailed, timedOut, bodyTooLarge
            case unacceptableStatus, decodingFailed, tooManyRestarts, decisionFailed, adapterFailed
            case unexpectedResponse, connectTimeout, malformedResponse, decompressionLimit, unsupported
            case redirectLimit, redirectCycle, insecureRedirect, invalidRedirect
            case reauthenticationRequired, excessiveRefresh, credentialStoreFailed
            case cacheMiss
            case connectionRefused, connectionReset, networkUnreachable, hostNotFound, notConnectedToInternet
            case idleTimeout, truncatedResponse
            case untrustedCertificate, hostnameMismatch, certificateExpired, pinMismatch, tlsHandshakeFailed
            case clientCertificateRejected, invalidConfiguration
            case proxyAuthenticationRequired, proxyFailed
            case clientAuthenticationFailed, scopeRejected
            case eventTooLarge, lineTooLarge, reconnectLimit
            case fileWriteFailed
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// The code's name, such as `bodyTooLarge`.
        public var description: String { base.rawValue }

        /// Every code Courier defines today (more may come: do not switch over them exhaustively).
        public static var allCodes: [Code] { Base.allCases.map(Code.init) }

        /// The URL could not be built, or is not allowed (userinfo, a scheme other than http/https, no host).
        public static let invalidURL = Code(.invalidURL)
        /// A header name or value is illegal (control characters, non-token name). Nothing was sent.
        public static let invalidHeader = Code(.invalidHeader)
        /// The body and the method or framing headers disagree (a TRACE with a body, for example).
        public static let invalidBody = Code(.invalidBody)
        /// The query or body could not be encoded.
        public static let encodingFailed = Code(.encodingFailed)
        /// The request requires a credential and none could be attached.
        public static let missingCredential = Code(.missingCredential)
        /// A one-shot body would have to be sent twice (a retry or redirect of a stream).
        public static let bodyNotReplayable = Code(.bodyNotReplayable)
        /// The transport failed for a reason it did not classify.
        public static let transportFailed = Code(.transportFailed)
        /// The connection could not be made or was lost.
        public static let connectionFailed = Code(.connectionFailed)
        /// The call's deadline passed.
        public static let timedOut = Code(.timedOut)
        /// The response body is larger than the limit for reading it into memory.
        public static let bodyTooLarge = Code(.bodyTooLarge)
        /// The response status is not acceptable (by default: not 2xx).
        public static let unacceptableStatus = Code(.unacceptableStatus)
        /// The body could not be turned into the response type.
        public static let decodingFailed = Code(.decodingFailed)
        /// The decisions restarted the call more often than the client allows (a loop).
        public static let tooManyRestarts = Code(.tooManyRestarts)
        /// A decision failed the call with an error of its own.
        public static let decisionFailed = Code(.decisionFailed)
        /// An adapter failed with an error of its own.
        public static let adapterFailed = Code(.adapterFailed)
        /// The response is not what the transport or the request expected (a test double with no stub, say).
        public static let unexpectedResponse = Code(.unexpectedResponse)
        /// No connection could be made within the connect timeout.
        public static let connectTimeout = Code(.connectTimeout)
        /// The response violates HTTP framing or syntax (truncated body, conflicting `Content-Length`, a bad
        /// chunk). Never retried: the connection is discarded.
        public static let malformedResponse = Code(.malformedResponse)
        /// A compressed body inflates past the size or ratio limit.
        public static let decompressionLimit = Code(.decompressionLimit)
        /// The transport cannot do what the request asks (say which in the message).
        public static let unsupported = Code(.unsupported)
        /// More redirects than ``RedirectDecision/maxRedirects`` in one call.
        public static let redirectLimit = Code(.redirectLimit)
        /// A redirect leads back to a URL this call already visited.
        public static let redirectCycle = Code(.redirectCycle)
        /// A redirect from `https` to `http`, refused by default.
        public static let insecureRedirect = Code(.insecureRedirect)
        /// A redirect whose `Location` is missing, unparsable, carries userinfo, or is not http(s).
        public static let invalidRedirect = Code(.invalidRedirect)
        /// The credential cannot be renewed (the token endpoint answered `invalid_grant`, `invalid_client` or
        /// `unauthorized_client`, or there is no credential to renew): the user must sign in again.
        public static let reauthenticationRequired = Code(.reauthenticationRequired)
        /// More token refreshes in a short time than the authenticator's refresh limit allows (a refresh storm).
        public static let excessiveRefresh = Code(.excessiveRefresh)
        /// A credential store could not read, write or delete the credential (a corrupt file, a Keychain error).
        public static let credentialStoreFailed = Code(.credentialStoreFailed)
        /// The cache has no usable response and the request may not use the network (``CachePolicy/cacheOnly``,
        /// or `Cache-Control: only-if-cached`).
        public static let cacheMiss = Code(.cacheMiss)

        /// The server's host refused the connection: nothing listens on the port (`ECONNREFUSED`). Retried by
        /// the default ``RetryPolicy``.
        public static let connectionRefused = Code(.connectionRefused)
        /// The connection was reset or closed by the server before a response head arrived (`ECONNRESET`, a
        /// stale pooled connection the server had closed). Retried by the default ``RetryPolicy``.
        public static let connectionReset = Code(.connectionReset)
        /// No route to the server's address (`ENETUNREACH`, `EHOSTUNREACH`).
        public static let networkUnreachable = Code(.networkUnreachable)
        /// The server's host name could not be resolved (DNS).
        public static let hostNotFound = Code(.hostNotFound)
        /// The system reports that the device has no network connection at all (airplane mode, no Wi-Fi).
        public static let notConnectedToInternet = Code(.notConnectedToInternet)
        /// No byte arrived for longer than the idle (read) timeout, while waiting for the head or the body.
        public static let idleTimeout = Code(.idleTimeout)
        /// The response ended before its body was complete: fewer bytes than its `Content-Length`, a chunked body
        /// without its last chunk, or the connection closed or reset mid-body (on HTTP/2 with AsyncHTTPClient, also a
        /// body longer than its `Content-Length`). Never a short success, never
        /// cached; retried by the default ``RetryPolicy`` for idempotent methods.
        public static let truncatedResponse = Code(.truncatedResponse)
        /// The server's certificate chain does not lead to a trusted root (self-signed, unknown CA, a missing
        /// intermediate). A TLS failure is never retried.
        public static let untrustedCertificate = Code(.untrustedCertificate)
        /// The server's certificate is not valid for the host name the call connected to.
        public static let hostnameMismatch = Code(.hostnameMismatch)
        /// The server's certificate (or one in its chain) has expired or is not yet valid.
        public static let certificateExpired = Code(.certificateExpired)
        /// None of the public keys in the server's chain matches the pins configured for the host.
        public static let pinMismatch = Code(.pinMismatch)
        /// The TLS handshake failed for another reason: no common protocol version or cipher, an alert.
        public static let tlsHandshakeFailed = Code(.tlsHandshakeFailed)
        /// The server rejected the client certificate, or asked for one and none was configured.
        public static let clientCertificateRejected = Code(.clientCertificateRejected)
        /// A setting of the client or its transport cannot be used, found when a call needs it, before anything is
        /// sent: a client certificate or key (``TLSOptions/clientIdentity``) that is missing, unreadable or not PEM,
        /// trust roots that do not parse. Only this call fails; the next one reads the setting again. Never retried.
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// The HTTP proxy answered `407 Proxy Authentication Required`: credentials are missing or it refused
        /// them (``ProxyOptions/Credentials``). Never retried.
        public static let proxyAuthenticationRequired = Code(.proxyAuthenticationRequired)
        /// The HTTP proxy refused to open a tunnel to the server (a status other than 2xx or 407 to `CONNECT`,
        /// such as 403 for a port it does not allow, or 502 when it cannot reach the server). Never retried.
        public static let proxyFailed = Code(.proxyFailed)
        /// The token endpoint rejected the OAuth client itself (RFC 6749 §5.2 `invalid_client`,
        /// `unauthorized_client`, `unsupported_grant_type` or `invalid_request`): a wrong client ID or secret, the
        /// wrong client authentication method, a grant the client may not use. A configuration error, not a
        /// sign-out: the session and its credential are kept. Never retried.
        public static let clientAuthenticationFailed = Code(.clientAuthenticationFailed)
        /// The token endpoint refused the requested scope (RFC 6749 §5.2 `invalid_scope`): the scope is unknown,
        /// malformed or more than the grant allows. A configuration error, not a sign-out. Never retried.
        public static let scopeRejected = Code(.scopeRejected)
        /// One event of an event stream (Server-Sent Events) grew larger than the stream's maximum event size.
        public static let eventTooLarge = Code(.eventTooLarge)
        /// One line of a line-delimited stream (JSON Lines, an event stream's line) grew larger than the
        /// stream's maximum line size.
        public static let lineTooLarge = Code(.lineTooLarge)
        /// A stream that reconnects (Server-Sent Events) gave up after using its whole reconnection budget.
        public static let reconnectLimit = Code(.reconnectLimit)
        /// A file on this device could not be created or written: a download's destination (``DownloadParser``) or
        /// a streamed upload's temporary copy, in a folder that is missing or read-only, or on a full disk. The
        /// server is not at fault, and trying again does not help until the cause is fixed. Never retried.
        public static let fileWriteFailed = Code(.fileWriteFailed)
    }
}
