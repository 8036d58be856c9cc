public import Foundation

/// Obtains and renews a credential with the OAuth 2.0 client-credentials grant (RFC 6749 §4.4): server-to-server
/// calls, where the client acts on its own behalf and there is no user and no refresh token.
///
/// Give it to an ``Authenticator`` with an empty store and there is nothing to sign in: the first call that needs
/// a credential acquires one (``TokenAcquirer``), and a credential that is about to expire, or that the server
/// rejects with a 401, is replaced by a new one. Like a refresh, an acquisition is a single flight: a hundred
/// concurrent first calls cause one token request.
///
/// It posts `grant_type=client_credentials` (plus `scope` when given) as a form, authenticating the client as
/// `authentication` says; RFC 6749 §4.4 requires a confidential client, so use
/// ``OAuth2ClientAuthentication/clientSecretBasic(clientID:clientSecret:)`` (or
/// ``OAuth2ClientAuthentication/clientSecretPost(clientID:clientSecret:)`` if the server registered that). Token
/// errors throw ``CourierError/Code/clientAuthenticationFailed`` (`invalid_client`, `unauthorized_client`,
/// `invalid_grant` and the like) or ``CourierError/Code/scopeRejected`` (`invalid_scope`), never
/// ``CourierError/Code/reauthenticationRequired``: there is no session to end, and the next call asks again
/// (the authenticator's storm guard bounds how often).
///
/// ```swift
/// let base = Client(server: api, transport: transport)
/// let authenticator = Authenticator(
///     refresher: OAuth2ClientCredentialsRefresher(
///         client: base, path: "/oauth/token", server: identityProvider,
///         authentication: .clientSecretBasic(clientID: "billing-service", clientSecret: secret),
///         scope: "invoices:read"
///     )
/// )
/// let client = base.configured { $0.authenticate(with: authenticator) }
/// let invoices = try await client.send(ListInvoices())   // one token request first, then reused until it expires
/// ```
public struct OAuth2ClientCredentialsRefresher: TokenAcquirer {
    private let endpoint: OAuth2TokenEndpoint

    /// The client the token request goes through.
    public var client: Client { endpoint.client }
    /// The token endpoint's path on ``server`` (or on the client's server).
    public var path: String { endpoint.path }
    /// The token endpoint's server, when it is not the client's (an identity provider's host).
    public var server: Server? { endpoint.server }
    /// How the client authenticates to the token endpoint.
    public var authentication: OAuth2ClientAuthentication { endpoint.authentication }
    /// The scope requested, if any.
    public var scope: String? { endpoint.scope }

    /// Creates a client-credentials refresher.
    ///
    /// - Parameters:
    ///   - client: The client to send the token request through (its adapters other than authentication, its
    ///     decisions and transport apply).
    ///   - path: The token endpoint's path, such as `/oauth/token`.
    ///   - server: The token endpoint's server; `nil` sends to the client's server.
    ///   - authentication: The client authentication method the server registered the client with.
    ///   - scope: The scope to request, space-separated; `nil` for the client's default.
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

    /// Requests a new access token for the client.
    ///
    /// A refresh token in the response is dropped: RFC 6749 §4.4.3 says there should be none, and renewing means
    /// asking again.
    ///
    /// - Throws: ``CourierError/Code/clientAuthenticationFailed`` or ``CourierError/Code/scopeRejected`` when the
    ///   server refuses the client or the scope; the client's ``CourierError`` for any other failure;
    ///   `CancellationError`.
    public func acquire() async throws -> Credential {
        var credential = try await endpoint.credential(grant: "client_credentials", fields: [:], previous: nil)
        credential.refreshToken = nil
        return credential
    }

    /// Replaces `credential` with a new one: the same request as ``acquire()``.
    public func refresh(_ credential: Credential) async throws -> Credential {
        try await acquire()
    }
}
