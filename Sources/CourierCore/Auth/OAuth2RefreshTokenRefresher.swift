public import Foundation

/// Renews a credential with the OAuth 2.0 refresh-token grant (RFC 6749 §6) through a Courier ``Client``.
///
/// It posts `grant_type=refresh_token&refresh_token=…` (plus `scope` when given) as a form to the token endpoint,
/// authenticating the client as ``OAuth2ClientAuthentication`` says (`client_secret_basic`, `client_secret_post`
/// or `none`), with ``AuthenticationRequirement/none``: the refresh never carries the bearer token, so it never
/// waits on the authenticator it serves, even when `client` is the authenticated client itself. The token response
/// `{access_token, token_type, expires_in?, refresh_token?}` becomes the new credential; when the server rotates
/// the refresh token, the new one replaces the old (RFC 6749 §6 says the old one must be discarded), otherwise the
/// old one is kept.
///
/// Token error responses (RFC 6749 §5.2) map to distinct outcomes, each with an ``OAuth2TokenError`` as the
/// underlying error:
/// - `invalid_grant` (the refresh token expired, was revoked or reused) throws
///   ``CourierError/Code/reauthenticationRequired``: the ``Authenticator`` ends the session;
/// - `invalid_client`, `unauthorized_client`, `unsupported_grant_type` or `invalid_request` throws
///   ``CourierError/Code/clientAuthenticationFailed``, and `invalid_scope` ``CourierError/Code/scopeRejected``:
///   the client is misconfigured, which is not the user's fault, so the session and its credential are kept;
/// - every other failure keeps its own code (a 5xx is ``CourierError/Code/unacceptableStatus``, a timeout
///   ``CourierError/Code/timedOut``) and counts as transient.
///
/// Token requests and responses are never logged beyond the client's redacted one-line summary.
///
/// ```swift
/// let refresher = OAuth2RefreshTokenRefresher(
///     client: client, path: "/oauth/token", authentication: .clientSecretBasic(clientID: "web", clientSecret: secret)
/// )
/// ```
public struct OAuth2RefreshTokenRefresher: TokenRefresher {
    private let endpoint: OAuth2TokenEndpoint

    /// The client the token request goes through.
    public var client: Client { endpoint.client }
    /// The token endpoint's path on ``server`` (or on the client's server).
    public var path: String { endpoint.path }
    /// The token endpoint's server, when it is not the client's (an identity provider's host).
    public var server: Server? { endpoint.server }
    /// How the client authenticates to the token endpoint.
    public var authentication: OAuth2ClientAuthentication { endpoint.authentication }

    /// The OAuth client identifier.
    public var clientID: String { authentication.clientID }

    /// The `error` values of a token error response that mean the grant is dead and the user must sign in again:
    /// `invalid_grant` (RFC 6749 §5.2), and `bad_refresh_token`, GitHub's for an expired or revoked refresh token
    /// (which it answers with a 200). `invalid_client` and its kin are configuration errors
    /// (``CourierError/Code/clientAuthenticationFailed``).
    public static let reauthenticationErrors: Set<String> = ["invalid_grant", "bad_refresh_token"]

    /// Creates a refresher that authenticates the client with `authentication`.
    ///
    /// - Parameters:
    ///   - client: The client to send the token request through (its adapters other than authentication, its
    ///     decisions and transport apply).
    ///   - path: The token endpoint's path, such as `/oauth/token`.
    ///   - server: The token endpoint's server; `nil` sends to the client's server.
    ///   - authentication: The client authentication method the server registered the client with.
    ///   - scope: A narrower scope to request, if any.
    ///   - now: The current time, to turn `expires_in` into ``Credential/expiresAt``; injectable for tests.
    public init(
        client: Client,
        path: String,
        server: Server? = nil,
        authentication: OAuth2ClientAuthentication,
        scope: String? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        endpoint = OAuth2TokenEndpoint(
            client: client, path: path, server: server, authentication: authentication, scope: scope, now: now)
    }

    /// Creates a refresher for a public client (`clientSecret` `nil`: ``OAuth2ClientAuthentication/none(clientID:)``)
    /// or one that sends its secret in the body (``OAuth2ClientAuthentication/clientSecretPost(clientID:clientSecret:)``).
    ///
    /// Servers must support `client_secret_basic` and need not support `client_secret_post`: for a confidential
    /// client, prefer ``init(client:path:server:authentication:scope:now:)`` with
    /// ``OAuth2ClientAuthentication/clientSecretBasic(clientID:clientSecret:)``.
    public init(
        client: Client,
        path: String,
        server: Server? = nil,
        clientID: String,
        clientSecret: String? = nil,
        scope: String? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        let authentication: OAuth2ClientAuthentication =
            if let clientSecret { .clientSecretPost(clientID: clientID, clientSecret: clientSecret) } else {
                .none(clientID: clientID)
            }
        self.init(client: client, path: path, server: server, authentication: authentication, scope: scope, now: now)
    }

    /// `false` for a credential without a refresh token: it is used until it expires (or a server rejects it),
    /// then the call fails with ``CourierError/Code/reauthenticationRequired``.
    public func canRenew(_ credential: Credential) -> Bool {
        credential.refreshToken?.isEmpty == false
    }

    /// Sends the refresh-token grant and returns the new credential.
    ///
    /// - Throws: ``CourierError/Code/reauthenticationRequired`` when `credential` has no refresh token or the
    ///   server rejects the grant; ``CourierError/Code/clientAuthenticationFailed`` or
    ///   ``CourierError/Code/scopeRejected`` when it rejects the client or the scope; the client's ``CourierError``
    ///   for any other failure; `CancellationError`.
    public func refresh(_ credential: Credential) async throws -> Credential {
        guard let refreshToken = credential.refreshToken, !refreshToken.isEmpty else {
            throw CourierError(
                code: .reauthenticationRequired,
                stage: .decide,
                message: "the credential has no refresh token"
            )
        }
        return try await endpoint.credential(
            grant: "refresh_token", fields: ["refresh_token": refreshToken], previous: credential)
    }
}
