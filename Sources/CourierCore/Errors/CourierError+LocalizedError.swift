public import Foundation

extension CourierError: LocalizedError {
    /// The sentence for an end user from the default ``ErrorMessageProvider`` (English), so that
    /// `error.localizedDescription` and SwiftUI's alerts show "The server isn't answering right now…" rather than
    /// "The operation couldn't be completed". For localized sentences, use your own ``ErrorMessageProvider``.
    ///
    /// ``description`` stays the one-line developer text (code, stage, redacted request).
    public var errorDescription: String? {
        ErrorMessageProvider().message(for: self)
    }

    /// The developer description: code, stage and the redacted request.
    public var failureReason: String? {
        description
    }
}
