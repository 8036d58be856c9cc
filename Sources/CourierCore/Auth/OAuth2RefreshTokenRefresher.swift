public import Foundation
import HTTPTypes

/// Renews a credential with the OAuth 2.0 refresh-token grant (RFC 6749 §6) through a Courier ``Client``.
///
/// It posts `grant_type=refresh_token&refresh_token=…&client_id=…` (plus `client_secret` and `scope` when
/// given) as a form to the token endpoint, with ``AuthenticationRequirement/none``: the refresh never carries
/// the bearer token, so it never waits on the authenticator it serves, even when `client` is the authenticated
/// client itself. The token response `{access_token, token_type, expires_in?, refresh_token?}` becomes the new
/// credential; when the server rotates the refresh token, the new one replaces the old (RFC 6749 §6 says the
/// old one must be discarded), otherwise the old one is kept.
///
/// A `400` or `401` whose `error` is `invalid_grant`, `invalid_client` or `unauthorized_client` (RFC 6749 §5.2)
/// throws ``CourierError/Code/reauthenticationRequired``; every other failure keeps its own code (a 5xx is
/// ``CourierError/Code/unacceptableStatus``, a timeout ``CourierError/Code/timedOut``) and counts as transient.
/// Token requests and responses are never logged beyond the client's redacted one-line summary.
///
/// ```swift
/// let refresher = OAuth2RefreshTokenRefresher(client: client, path: "/oauth/token", clientID: "ios-app")
/// ```
public struct OAuth2RefreshTokenRefresher: TokenRefresher {
    /// The client the token request goes through.
    public let client: Client
    /// The token endpoint's path on ``server`` (or on the client's server).
    public let path: String
    /// The token endpoint's server, when it is not the client's (an identity provider's host).
    public let server: Server?
    /// The OAuth client identifier.
    public let clientID: String
    private let clientSecret: String?
    private let scope: String?
    private let now: @Sendable () -> Date

    /// The `error` values of a token error response that mean the grant is dead and the user must sign in again.
    public static let reauthenticationErrors: Set<String> = ["invalid_grant", "invalid_client", "unauthorized_client"]

    /// Creates a refresher.
    ///
    /// - Parameters:
    ///   - client: The client to send the token request through (its adapters other than authentication, its
    ///     decisions and transport apply).
    ///   - path: The token endpoint's path, such as `/oauth/token`.
    ///   - server: The token endpoint's server; `nil` sends to the client's server.
    ///   - clientID: The OAuth client identifier.
    ///   - clientSecret: The client secret of a confidential client; `nil` for public clients (apps).
    ///   - scope: A narrower scope to request, if any.
    ///   - now: The current time, to turn `expires_in` into ``Credential/expiresAt``; injectable for tests.
    public init(
        client: Client,
        path: String,
        server: Server? = nil,
        clientID: String,
        clientSecret: String? = nil,
        scope: String? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.client = client
        self.path = path
        self.server = server
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.scope = scope
        self.now = now
    }

    /// Sends the refresh-token grant and returns the new credential.
    ///
    /// - Throws: ``CourierError/Code/reauthenticationRequired`` when `credential` has no refresh token or the
    ///   server rejects the grant; the client's ``CourierError`` for any other failure; `CancellationError`.
    public func refresh(_ credential: Credential) async throws -> Credential {
        guard let refreshToken = credential.refreshToken, !refreshToken.isEmpty else {
            throw CourierError(
                code: .reauthenticationRequired,
                stage: .decide,
                message: "the credential has no refresh token"
            )
        }
        var form = ["grant_type": "refresh_token", "refresh_token": refreshToken, "client_id": clientID]
        form["client_secret"] = clientSecret
        form["scope"] = scope
        let start = now()
        let token = try await client.send(TokenRequest(path: path, server: server, form: form))
        var renewed = Credential(
            accessToken: token.accessToken,
            refreshToken: token.refreshToken ?? credential.refreshToken,
            expiresAt: token.expiresIn.map { start.addingTimeInterval($0) },
            tokenType: token.tokenType.map(Self.normalized) ?? credential.tokenType,
            version: credential.version
        )
        if renewed.refreshToken?.isEmpty ?? false { renewed.refreshToken = credential.refreshToken }
        return renewed
    }

    /// `bearer` (any case) as `Bearer`; any other type as given.
    private static func normalized(_ type: String) -> String {
        type.lowercased() == "bearer" ? "Bearer" : type
    }
}

/// The token request: a form POST that never carries the credential.
private struct TokenRequest: Request {
    typealias Response = TokenResponse
    let path: String
    let server: Server?
    let form: [String: String]

    var method: HTTPRequest.Method { .post }
    var body: RequestBody? { .form(form) }
    var headers: RequestHeaders { ["Accept": "application/json"] }
    var authentication: AuthenticationRequirement { .none }
    /// Token responses are never stored (RFC 6749 §5.1), whatever their headers say.
    var cachePolicy: CachePolicy { .bypass }
    var decisions: [any Decision] { [] }
    var parser: any ResponseParser<TokenResponse> { TokenResponseParser() }
}

/// A successful token response (RFC 6749 §5.1).
struct TokenResponse: Decodable, Sendable {
    let accessToken: String
    let tokenType: String?
    let expiresIn: TimeInterval?
    let refreshToken: String?

    private enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        accessToken = try container.decode(String.self, forKey: .accessToken)
        tokenType = try container.decodeIfPresent(String.self, forKey: .tokenType)
        refreshToken = try container.decodeIfPresent(String.self, forKey: .refreshToken)
        // Some servers send expires_in as a string; accept both.
        if let seconds = try? container.decodeIfPresent(TimeInterval.self, forKey: .expiresIn) {
            expiresIn = seconds
        } else if let text = try? container.decodeIfPresent(String.self, forKey: .expiresIn) {
            expiresIn = TimeInterval(text)
        } else {
            expiresIn = nil
        }
    }
}

/// A token error response (RFC 6749 §5.2).
private struct TokenErrorResponse: Decodable {
    let error: String
}

/// Decodes a token response, and classifies a token error response.
private struct TokenResponseParser: ResponseParser {
    func parse(_ response: ReceivedResponse, context: ParseContext) throws -> TokenResponse {
        let code = response.status.code
        guard response.status.kind == .successful else {
            let tokenError = try? JSONDecoder().decode(TokenErrorResponse.self, from: response.body)
            if code == 400 || code == 401, let tokenError,
                OAuth2RefreshTokenRefresher.reauthenticationErrors.contains(tokenError.error)
            {
                throw CourierError(
                    code: .reauthenticationRequired,
                    stage: .decide,
                    message: "the token endpoint rejected the refresh token (\(tokenError.error)); sign in again",
                    response: response.head
                )
            }
            let detail = tokenError.map { " (\($0.error))" } ?? ""
            throw CourierError(
                code: .unacceptableStatus,
                stage: .decide,
                message: "the token endpoint answered \(code)\(detail)",
                response: response.head
            )
        }
        do {
            let token = try JSONDecoder().decode(TokenResponse.self, from: response.body)
            guard !token.accessToken.isEmpty else {
                throw CourierError(code: .decodingFailed, stage: .parse, message: "the access token is empty")
            }
            return token
        } catch let error as CourierError {
            throw error
        } catch {
            // The body holds secrets: name the problem, never the content.
            throw CourierError(
                code: .decodingFailed,
                stage: .parse,
                message: "the token response is not a valid OAuth 2.0 token response"
            )
        }
    }
}
