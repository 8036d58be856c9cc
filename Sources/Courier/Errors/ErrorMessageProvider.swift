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

/// Turns any error into one sentence an end user can read: the Philly talk's `ErrorMessageProvider`.
///
/// The sentence comes from, in order: a ``UserPresentableError`` (the server's own message, for example),
/// the ``CourierError/Code`` of a ``CourierError`` (a status code gets a sentence per class), or a generic
/// fallback. Every sentence passes through `localize(key, english)`, so an app can return its own translation
/// for each key (`courier.error.connectionFailed`, `courier.error.status.401`, …).
///
/// ```swift
/// let messages = ErrorMessageProvider { key, english in
///     Bundle.main.localizedString(forKey: key, value: english, table: "Errors")
/// }
/// alert.message = messages.message(for: error)
/// ```
public struct ErrorMessageProvider: Sendable {
    /// Returns the localized sentence for a key, given the English default.
    public typealias Localize = @Sendable (_ key: String, _ english: String) -> String

    private let localize: Localize

    /// Creates a provider.
    ///
    /// - Parameter localize: Looks up a translation; by default returns the English sentence.
    public init(localize: @escaping Localize = { _, english in english }) {
        self.localize = localize
    }

    /// One sentence describing `error` for an end user.
    public func message(for error: any Error) -> String {
        if let presentable = error as? any UserPresentableError, let message = presentable.userMessage {
            return message
        }
        if error is CancellationError {
            return localize("courier.error.cancelled", "The request was cancelled.")
        }
        guard let error = error as? CourierError else {
            return localize("courier.error.unknown", "Something went wrong. Please try again.")
        }
        if let underlying = error.underlyingError as? any UserPresentableError, let message = underlying.userMessage {
            return message
        }
        if error.code == .unacceptableStatus, let status = error.response?.status.code {
            return statusMessage(status)
        }
        let (key, english) = Self.sentence(for: error.code)
        return localize("courier.error.\(key)", english)
    }

    private func statusMessage(_ status: Int) -> String {
        let english: String
        switch status {
        case 401: english = "Please sign in again."
        case 403: english = "You don't have permission to do that."
        case 404: english = "We couldn't find what you were looking for."
        case 408, 504: english = "The server took too long to respond. Please try again."
        case 409: english = "This was changed by someone else. Please reload and try again."
        case 413: english = "That is too large to upload."
        case 429: english = "Too many requests. Please wait a moment and try again."
        case 400..<500: english = "The request could not be completed."
        case 503: english = "The service is temporarily unavailable. Please try again later."
        default: english = "The server had a problem. Please try again later."
        }
        return localize("courier.error.status.\(status)", english)
    }

    private static func sentence(for code: CourierError.Code) -> (key: String, english: String) {
        let english: String
        switch code {
        case .connectionFailed, .transportFailed:
            english = "Couldn't connect to the server. Check your internet connection and try again."
        case .timedOut:
            english = "The server took too long to respond. Please try again."
        case .missingCredential, .reauthenticationRequired:
            english = "Please sign in again to continue."
        case .excessiveRefresh, .credentialStoreFailed:
            english = "We couldn't keep you signed in. Please sign in again."
        case .bodyTooLarge:
            english = "The server sent more data than expected."
        case .decodingFailed, .unexpectedResponse:
            english = "The server sent a response we couldn't understand."
        default:
            english = "Something went wrong. Please try again."
        }
        return (code.description, english)
    }
}
