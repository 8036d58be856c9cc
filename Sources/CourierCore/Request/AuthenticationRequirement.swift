/// Whether a request carries the client's credential.
///
/// It matters only when the client has an authenticating adapter (``BearerTokenAdapter``): a login or
/// public endpoint says ``none``, an endpoint that makes no sense anonymously says ``required``.
public enum AuthenticationRequirement: Hashable, Sendable {
    /// Never attach a credential (login, token refresh, public endpoints).
    case none
    /// Attach a credential when one is available (the default).
    case optional
    /// Attach a credential; fail with ``CourierError/Code/missingCredential`` before sending when there is none.
    ///
    /// The requirement is the request's own origin's: after a redirect to another origin, whose requests carry no
    /// credential, the call goes on without one (a download redirected to a CDN's signed URL).
    case required
}
