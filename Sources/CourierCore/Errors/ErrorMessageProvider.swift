public import Foundation
import HTTPTypes

/// An error a server or app can describe to an end user in its own words.
///
/// Conform your decoded API error to it, and ``ErrorMessageProvider`` shows the server's message:
///
/// ```swift
/// struct APIError: Decodable, Error, UserPresentableError {
///     let code: Int
///     let reason: String
///     var userMessage: String? { reason }
/// }
/// ```
public protocol UserPresentableError: Error {
    /// A sentence for the end user, or `nil` to fall back to the generic message.
    var userMessage: String? { get }
}

/// Turns any error into one sentence an end user can read.
///
/// The sentence comes from, in order: a ``UserPresentableError`` (the server's own message, for example), an
/// override for the error's ``CourierError/Code``, an override for its ``Kind``, or the English catalogue passed
/// through `localize(key, english)`. Every ``CourierError/Code`` and every status has a ``Kind`` (offline, timed
/// out, server unavailable, session expired, forbidden, not found, rate limited, invalid response, too large,
/// cancelled, …), and each kind one sentence.
///
/// Sentences for a server that said how long to wait (`Retry-After` on a 503 or 429) come from the kind's
/// `.wait` key and contain `{wait}`, which is replaced after localizing by the wait formatted for `locale`
/// ("2 minutes").
///
/// ```swift
/// let messages = ErrorMessageProvider { key, english in
///     Bundle.main.localizedString(forKey: key, value: english, table: "Errors")
/// }
/// .overriding(.notFound, with: "That item was deleted.")
/// alert.message = messages.message(for: error)
/// ```
public struct ErrorMessageProvider: Sendable {
    /// Returns the localized sentence for a key (such as `courier.error.offline`), given the English default.
    public typealias Localize = @Sendable (_ key: String, _ english: String) -> String

    private let localize: Localize
    private let locale: Locale
    private var kindOverrides: [Kind: String] = [:]
    private var codeOverrides: [CourierError.Code: String] = [:]

    /// Creates a provider.
    ///
    /// - Parameters:
    ///   - locale: The locale waits such as "2 minutes" are formatted in (English by default).
    ///   - localize: Looks up a translation for a key; by default returns the English sentence. Keys are listed
    ///     on ``Kind``: `courier.error.<kind>`, and `courier.error.<kind>.wait` for the sentences with `{wait}`.
    public init(
        locale: Locale = Locale(identifier: "en_US"),
        localize: @escaping Localize = { _, english in english }
    ) {
        self.locale = locale
        self.localize = localize
    }

    /// A provider that uses `sentence` for every error of `kind` (unless a code override or the error's own
    /// message applies). `sentence` may contain `{wait}`.
    public func overriding(_ kind: Kind, with sentence: String) -> ErrorMessageProvider {
        var copy = self
        copy.kindOverrides[kind] = sentence
        return copy
    }

    /// A provider that uses `sentence` for every ``CourierError`` with `code` (unless the error's own message
    /// applies). `sentence` may contain `{wait}`.
    public func overriding(_ code: CourierError.Code, with sentence: String) -> ErrorMessageProvider {
        var copy = self
        copy.codeOverrides[code] = sentence
        return copy
    }

    /// One sentence describing `error` for an end user.
    public func message(for error: any Error) -> String {
        if let presentable = error as? any UserPresentableError, let message = presentable.userMessage {
            return message
        }
        let courierError = error as? CourierError
        if let underlying = courierError?.underlyingError as? any UserPresentableError,
            let message = underlying.userMessage
        {
            return message
        }
        let wait = courierError?.response.flatMap { RetryAfter.delay(in: $0) }.flatMap(format)
        let kind = Self.kind(for: error)
        let template: String
        if let code = courierError?.code, let override = codeOverrides[code] {
            template = override
        } else if let override = kindOverrides[kind] {
            template = override
        } else if wait != nil, kind.hasWaitSentence {
            template = localize("courier.error.\(kind).wait", kind.englishWithWait)
        } else {
            template = localize("courier.error.\(kind)", kind.english)
        }
        guard template.contains("{wait}") else { return template }
        return template.replacingOccurrences(of: "{wait}", with: wait ?? localize("courier.error.wait", "a moment"))
    }

    /// The catalogue entry for `error`: what kind of problem it is for the user.
    public static func kind(for error: any Error) -> Kind {
        if error is CancellationError { return .cancelled }
        guard let error = error as? CourierError else { return .unknown }
        if error.code == .unacceptableStatus {
            guard let status = error.response?.status.code else { return .requestFailed }
            if status == 401, let request = error.request, !carriesCredential(request) {
                // Nothing was signed in to expire: a sign-in with a wrong password, a public endpoint.
                return .requestFailed
            }
            return kind(forStatus: status)
        }
        return kind(for: error.code)
    }

    /// Whether `request` (as an error keeps it: redacted) carried a user's credential, which a 401 says has
    /// expired: `Authorization`, a cookie, a hidden header named for a session or an access token (`X-Auth-Token`,
    /// `X-Session-Token`), or an OAuth `access_token` in the query. Not an app's API key (`X-Api-Key`) or a CSRF
    /// token, which every request of a sign-in page carries too.
    private static func carriesCredential(_ request: HTTPRequest) -> Bool {
        for field in request.headerFields {
            let name = field.name.canonicalName
            if name == "authorization" || name == "cookie" { return true }
            if field.value.contains(Redactor.placeholder),
                ["auth", "session", "access"].contains(where: { name.contains($0) })
            {
                return true
            }
        }
        return request.path.map { $0.contains("access_token=\(Redactor.placeholder)") } ?? false
    }

    /// The catalogue entry for a code (``CourierError/Code/unacceptableStatus`` without a status: `requestFailed`).
    public static func kind(for code: CourierError.Code) -> Kind {
        switch code {
        case .notConnectedToInternet: .offline
        case .connectionFailed, .transportFailed, .connectTimeout, .connectionRefused, .networkUnreachable,
            .hostNotFound, .proxyFailed:
            .serverUnreachable
        // The proxy refused the app's proxy credentials: trying later does not help, and the server was not reached.
        case .proxyAuthenticationRequired: .requestFailed
        case .connectionReset, .truncatedResponse: .connectionLost
        case .untrustedCertificate, .hostnameMismatch, .certificateExpired, .pinMismatch, .tlsHandshakeFailed,
            .clientCertificateRejected:
            .secureConnectionFailed
        case .timedOut, .idleTimeout: .timedOut
        case .missingCredential, .reauthenticationRequired: .sessionExpired
        // The session goes on: the device could not keep the credential, or the storm guard paused renewals.
        // Signing in again is neither needed nor a remedy.
        case .excessiveRefresh, .credentialStoreFailed: .unknown
        // A full disk or a missing folder on the device: not the server, and not a connection to try again.
        case .fileWriteFailed: .unknown
        case .bodyTooLarge, .decompressionLimit, .eventTooLarge, .lineTooLarge: .responseTooLarge
        case .reconnectLimit: .connectionLost
        case .clientAuthenticationFailed, .scopeRejected: .requestFailed
        case .decodingFailed, .unexpectedResponse, .malformedResponse, .redirectLimit, .redirectCycle,
            .invalidRedirect:
            .invalidResponse
        case .insecureRedirect: .insecureConnection
        case .invalidURL, .invalidHeader, .invalidBody, .encodingFailed, .bodyNotReplayable, .unacceptableStatus,
            .unsupported, .invalidConfiguration:
            .requestFailed
        default: .unknown
        }
    }

    /// The catalogue entry for an HTTP status the decisions did not accept (``kind(for:)-(Error)`` makes a 401 to a
    /// request that carried no credential `requestFailed`).
    public static func kind(forStatus status: Int) -> Kind {
        switch status {
        case 401: .sessionExpired
        case 403: .forbidden
        case 404, 410: .notFound
        case 408, 504: .timedOut
        case 409, 412: .conflict
        case 413: .uploadTooLarge
        case 429: .rateLimited
        case 502, 503: .serverUnavailable
        case 500..<600: .serverError
        default: .requestFailed
        }
    }

    /// The wait, such as "2 minutes", rounded up to whole seconds, minutes or hours.
    private func format(_ wait: Duration) -> String? {
        guard wait > .zero else { return nil }
        return wait.formatted(
            .units(
                allowed: [.hours, .minutes, .seconds], width: .wide, maximumUnitCount: 1,
                fractionalPart: .hide(rounded: .up)
            )
            .locale(locale)
        )
    }
}
