/// Something that happened to an ``Authenticator``'s session, delivered on ``Authenticator/events``.
///
/// Watch for ``sessionEnded(_:)`` to send the user to the sign-in screen:
///
/// ```swift
/// for await event in authenticator.events {
///     if case .sessionEnded(.reauthenticationRequired) = event { await router.showSignIn() }
/// }
/// ```
public enum AuthenticationEvent: Hashable, Sendable {
    /// ``Authenticator/signIn(_:)`` installed a credential with this version.
    case signedIn(version: Int)
    /// A refresh produced the credential with this version (already saved, unless ``saveFailed(version:message:)``
    /// follows).
    case refreshed(version: Int)
    /// The session is over: the user signed out, or the server rejected the refresh token.
    case sessionEnded(SessionEndReason)
    /// The credential with this version is in use but could not be saved to the store; it is lost when the
    /// process ends.
    case saveFailed(version: Int, message: String)

    /// Why a session ended.
    public enum SessionEndReason: Hashable, Sendable {
        /// ``Authenticator/signOut()`` was called.
        case signedOut
        /// The token endpoint rejected the refresh token (`invalid_grant` and the like): sign in again.
        case reauthenticationRequired
    }
}
