extension ErrorMessageProvider {
    /// A kind of problem, as an end user sees it: one entry of the catalogue, with one English sentence.
    ///
    /// The localization key of a kind is `courier.error.<name>` (for example `courier.error.offline`); kinds
    /// whose sentence can say how long to wait also have `courier.error.<name>.wait`, with `{wait}` in it.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable, CaseIterable {
            case offline, timedOut, serverUnavailable, serverError, sessionExpired, forbidden, notFound, conflict
            case rateLimited, invalidResponse, uploadTooLarge, responseTooLarge, insecureConnection, requestFailed
            case cancelled, unknown
            case serverUnreachable, connectionLost, secureConnectionFailed
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// The kind's name, as in its key: `offline`.
        public var description: String { base.rawValue }

        /// Every kind in the catalogue.
        public static var allKinds: [Kind] { Base.allCases.map(Kind.init) }

        /// The device has no network connection (the system says so: airplane mode, no Wi-Fi).
        public static let offline = Kind(.offline)
        /// The server can't be reached: the connection was refused, timed out, or its name did not resolve.
        public static let serverUnreachable = Kind(.serverUnreachable)
        /// The connection broke while the request or its answer was under way.
        public static let connectionLost = Kind(.connectionLost)
        /// A secure (TLS) connection could not be made: an untrusted, expired or mismatched certificate, a pin
        /// mismatch, a rejected client certificate, no common TLS version.
        public static let secureConnectionFailed = Kind(.secureConnectionFailed)
        /// The server did not answer in time.
        public static let timedOut = Kind(.timedOut)
        /// The service is down for now (502, 503); says how long to wait when the server did.
        public static let serverUnavailable = Kind(.serverUnavailable)
        /// The server failed (500 and other 5xx).
        public static let serverError = Kind(.serverError)
        /// The user must sign in again (401 to a request that carried a credential, a refresh that failed for good).
        public static let sessionExpired = Kind(.sessionExpired)
        /// The user may not do this (403).
        public static let forbidden = Kind(.forbidden)
        /// What was asked for does not exist (404, 410).
        public static let notFound = Kind(.notFound)
        /// Someone else changed it first (409, 412).
        public static let conflict = Kind(.conflict)
        /// Too many requests (429); says how long to wait when the server did.
        public static let rateLimited = Kind(.rateLimited)
        /// The response could not be understood (bad body, broken framing, a redirect loop).
        public static let invalidResponse = Kind(.invalidResponse)
        /// What the user sends is too large (413).
        public static let uploadTooLarge = Kind(.uploadTooLarge)
        /// The server sent more than the app reads.
        public static let responseTooLarge = Kind(.responseTooLarge)
        /// The connection would not be secure (a redirect from https to http).
        public static let insecureConnection = Kind(.insecureConnection)
        /// The request could not be made or was refused (other 4xx, a 401 to a request without a credential such
        /// as a sign-in with a wrong password, a request the app built wrong).
        public static let requestFailed = Kind(.requestFailed)
        /// The request was cancelled.
        public static let cancelled = Kind(.cancelled)
        /// Anything else.
        public static let unknown = Kind(.unknown)

        /// The English sentence.
        public var english: String {
            switch base {
            case .offline: "You appear to be offline, so please check your internet connection and try again."
            case .serverUnreachable: "The server isn't answering right now, so please try again later."
            case .connectionLost: "The connection to the server was interrupted, so please try again."
            case .secureConnectionFailed: "A secure connection to the server couldn't be made."
            case .timedOut: "The server is taking too long to respond, so please try again."
            case .serverUnavailable: "The service is temporarily unavailable, so please try again later."
            case .serverError: "The server had a problem, so please try again later."
            case .sessionExpired: "Your session has expired, so please sign in again."
            case .forbidden: "You don't have permission to do that."
            case .notFound: "We couldn't find what you were looking for."
            case .conflict: "This was changed somewhere else, so please reload and try again."
            case .rateLimited: "You're doing that too often, so please wait a moment and try again."
            case .invalidResponse: "The server sent a response we couldn't understand."
            case .uploadTooLarge: "That's too large to send, so please try something smaller."
            case .responseTooLarge: "The server sent more data than this app can handle."
            case .insecureConnection: "The connection wasn't secure, so it was stopped."
            case .requestFailed: "The request couldn't be completed."
            case .cancelled: "The request was cancelled."
            case .unknown: "Something went wrong, so please try again."
            }
        }

        /// Whether the kind has a sentence that says how long to wait.
        var hasWaitSentence: Bool { base == .serverUnavailable || base == .rateLimited }

        /// The English sentence with `{wait}`, for kinds with ``hasWaitSentence``.
        var englishWithWait: String {
            switch base {
            case .serverUnavailable: "The service is temporarily unavailable, so please try again in {wait}."
            case .rateLimited: "You're doing that too often, so please wait {wait} and try again."
            default: english
            }
        }
    }
}
