/// Exchanges a credential for a fresh one: the one network call an ``Authenticator`` makes on its own.
///
/// The authenticator calls ``refresh(_:)`` at most once at a time per credential version (single flight), from
/// a task of its own, so cancelling one waiting request does not cancel a refresh others wait for. The
/// refresher must not send its request with the authenticator's credential: use
/// ``AuthenticationRequirement/none`` (as ``OAuth2RefreshTokenRefresher`` does), or the refresh could wait on
/// itself.
///
/// Classify failures by what they throw:
/// - ``CourierError`` with ``CourierError/Code/reauthenticationRequired`` when the grant is dead
///   (`invalid_grant` and the like): the authenticator ends the session and stops refreshing;
/// - anything else (a 5xx, a timeout, a lost connection) is transient: the credential is kept and a later
///   request may try again.
///
/// ```swift
/// struct DeviceTokenRefresher: TokenRefresher {
///     let client: Client
///     func refresh(_ credential: Credential) async throws -> Credential {
///         let token = try await client.send(RenewDeviceToken(old: credential.accessToken))
///         return Credential(accessToken: token.value, expiresAt: token.expiry)
///     }
/// }
/// ```
public protocol TokenRefresher: Sendable {
    /// Returns a fresh credential for `credential`.
    ///
    /// The returned ``Credential/version`` is ignored: the authenticator assigns the next one. Keep
    /// `credential.refreshToken` in the result when the server did not rotate it.
    ///
    /// - Parameter credential: The credential to renew (its refresh token, usually).
    /// - Returns: The new credential.
    /// - Throws: ``CourierError/Code/reauthenticationRequired`` when the user must sign in again; any other
    ///   error for a transient failure.
    func refresh(_ credential: Credential) async throws -> Credential

    /// Whether ``refresh(_:)`` could renew `credential` at all; `true` by default.
    ///
    /// An ``Authenticator`` asks before renewing a credential that is inside its refresh window but has not expired
    /// and that no server rejected: when this is `false`, it keeps signing with the credential until it expires or a
    /// server rejects it, instead of ending the session early. ``OAuth2RefreshTokenRefresher`` answers `false` for a
    /// credential without a refresh token (a provider that issues none unless asked for `offline_access`).
    func canRenew(_ credential: Credential) -> Bool
}

extension TokenRefresher {
    /// `true`: a refresher can renew any credential unless it says otherwise.
    public func canRenew(_ credential: Credential) -> Bool { true }
}

/// A ``TokenRefresher`` that can also obtain a credential when there is none: a grant without a user, such as the
/// OAuth 2.0 client-credentials grant (``OAuth2ClientCredentialsRefresher``).
///
/// With one, an ``Authenticator`` whose store is empty (or after ``Authenticator/signOut()``) calls ``acquire()``
/// on the first call that needs a credential, in a single flight shared by every concurrent caller, instead of
/// sending the request unsigned. Expiry and a 401 renew through ``TokenRefresher/refresh(_:)`` as usual.
public protocol TokenAcquirer: TokenRefresher {
    /// Returns a new credential, without an old one to renew.
    ///
    /// - Throws: ``CourierError/Code/clientAuthenticationFailed`` or ``CourierError/Code/scopeRejected`` when the
    ///   server refuses the client or the scope (a configuration error); any other error for a transient failure.
    func acquire() async throws -> Credential
}
