import Foundation
import HTTPTypes

/// A token error response from an OAuth 2.0 token endpoint (RFC 6749 §5.2): the underlying error of the
/// ``CourierError`` a token request fails with.
///
/// ```swift
/// catch let error as CourierError where error.code == .clientAuthenticationFailed {
///     let oauth = error.underlyingError as? OAuth2TokenError   // oauth?.error == "invalid_client"
/// }
/// ```
public struct OAuth2TokenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The `error` code, such as `invalid_grant` or `invalid_client`.
    public let error: String
    /// The server's `error_description`, when it sent one: printable ASCII only (RFC 6749 §5.2), at most 200
    /// characters.
    public let errorDescription: String?
    /// The server's `error_uri`, when it sent one.
    public let errorURI: String?
    /// The HTTP status of the error response.
    public let status: Int

    /// Creates a token error (for tests and custom refreshers).
    public init(error: String, errorDescription: String? = nil, errorURI: String? = nil, status: Int = 400) {
        self.error = error
        self.errorDescription = errorDescription
        self.errorURI = errorURI
        self.status = status
    }

    /// `invalid_grant (400): the refresh token was revoked`.
    public var description: String {
        "\(error) (\(status))" + (errorDescription.map { ": \($0)" } ?? "")
    }

    /// The Courier code for this error in a token request of `grant`:
    /// - `invalid_grant`, and the other values of ``OAuth2RefreshTokenRefresher/reauthenticationErrors`` →
    ///   ``CourierError/Code/reauthenticationRequired`` (the grant is dead: sign in again); for the
    ///   client-credentials grant, which has no user grant to lose, it is
    ///   ``CourierError/Code/clientAuthenticationFailed``;
    /// - `invalid_scope` → ``CourierError/Code/scopeRejected``;
    /// - `invalid_client`, `unauthorized_client`, `unsupported_grant_type`, `invalid_request` →
    ///   ``CourierError/Code/clientAuthenticationFailed`` (a configuration error);
    /// - any other value → `nil`: the status decides.
    func code(forGrant grant: String) -> CourierError.Code? {
        if OAuth2RefreshTokenRefresher.reauthenticationErrors.contains(error) {
            return grant == "client_credentials" ? .clientAuthenticationFailed : .reauthenticationRequired
        }
        return switch error {
        case "invalid_scope": .scopeRejected
        case "invalid_client", "unauthorized_client", "unsupported_grant_type", "invalid_request":
            .clientAuthenticationFailed
        default: nil
        }
    }
}

/// A token endpoint and how the client authenticates to it: what every grant's refresher shares.
struct OAuth2TokenEndpoint: Sendable {
    let client: Client
    let path: String
    let server: Server?
    let authentication: OAuth2ClientAuthentication
    let scope: String?
    let now: @Sendable () -> Date

    /// Sends `grant` with `fields` (and the scope, when set) and returns the credential it grants; `previous`
    /// supplies what the response leaves out.
    func credential(grant: String, fields: [String: String], previous: Credential?) async throws -> Credential {
        var fields = fields
        fields["scope"] = scope
        let start = now()
        let request = OAuth2TokenRequest(
            path: path, server: server, grant: grant, fields: fields, authentication: authentication)
        return try await client.send(request).credential(obtainedAt: start, previous: previous)
    }
}

/// A request whose response the client's own decisions must not see: of the client's decision chain only its
/// redirect and retry decisions run, then the request's ``Request/decisions``.
///
/// A token request: a client's decisions are written for its API. A `.validateStatus(decoding: APIError.self)`
/// added to the client turned the token endpoint's `400 invalid_grant` into `unacceptableStatus` before the token
/// parser read it, so a dead grant looked transient (the session never ended, and every later 401 spent another
/// refresh), and `invalid_client` was never `clientAuthenticationFailed`.
protocol OwnDecisionChain {}

/// A request whose caller takes a redirect to another scheme than http(s) itself (generated OpenAPI code: an app's
/// callback, `myapp://cb?code=…`): the redirect decision's refusal of it is passed over, and the 3xx goes on down the
/// chain, as it is, to the request's parser.
package protocol ReturnsForeignRedirects {}

/// A token request (RFC 6749 §3.2): a form POST that never carries the bearer credential and is never cached.
struct OAuth2TokenRequest: Request, CredentialBody, OwnDecisionChain {
    typealias Response = OAuth2TokenResponse
    let path: String
    let server: Server?
    let form: [String: String]
    let headers: RequestHeaders
    /// Ahead of the calls that wait for the token it brings (see ``RequestLane``).
    var lane: RequestLane { .priority }

    /// A request for `grant` with `fields`, authenticated as `authentication`.
    init(
        path: String,
        server: Server?,
        grant: String,
        fields: [String: String],
        authentication: OAuth2ClientAuthentication
    ) {
        var form = fields
        form["grant_type"] = grant
        var headers: RequestHeaders = ["Accept": "application/json"]
        authentication.apply(to: &form, headers: &headers)
        self.path = path
        self.server = server
        self.form = form
        self.headers = headers
    }

    var method: HTTPRequest.Method { .post }
    var body: RequestBody? { .form(form) }
    var authentication: AuthenticationRequirement { .none }
    /// Token responses are never stored (RFC 6749 §5.1), whatever their headers say.
    var cachePolicy: CachePolicy { .bypass }
    var decisions: [any Decision] { [] }
    var parser: any ResponseParser<OAuth2TokenResponse> {
        var secrets = Redactor.Secrets()
        for secret in bodySecrets { secrets.insert(secret) }
        return OAuth2TokenResponseParser(grant: form["grant_type"] ?? "", secrets: secrets)
    }

    /// The secrets this request carries (a refresh token, a client secret, a code, a password): what an error
    /// response must not echo into errors and events.
    var bodySecrets: [String] {
        var secrets = form.compactMap { name, value in
            ["grant_type", "scope", "client_id"].contains(name) ? nil : value
        }
        // A `client_secret_basic` secret, back from its `Authorization` value (kept there rather than stored once
        // more: every call's async frames hold the request, issue #17).
        for field in headers where field.name.lowercased() == "authorization" && field.value.hasPrefix("Basic ") {
            guard let decoded = Data(base64Encoded: String(field.value.dropFirst(6))),
                let pair = String(data: decoded, encoding: .utf8), let colon = pair.firstIndex(of: ":")
            else { continue }
            let encoded = String(pair[pair.index(after: colon)...])
            secrets.append(encoded.removingPercentEncoding ?? encoded)
        }
        return secrets.filter { !$0.isEmpty }
    }
}

/// A successful token response (RFC 6749 §5.1).
struct OAuth2TokenResponse: Decodable, Sendable {
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
        var seconds: TimeInterval?
        if let number = try? container.decodeIfPresent(TimeInterval.self, forKey: .expiresIn) {
            seconds = number
        } else if let text = try? container.decodeIfPresent(String.self, forKey: .expiresIn) {
            seconds = TimeInterval(text)
        }
        // A lifetime that is not a positive, finite number of seconds ("inf", "nan", 0, -1) is no lifetime: the
        // token then lasts until the server rejects it. Taken as given, 0 made every call renew the token (until the
        // storm guard failed them all), and "inf" an expiry date no store can encode.
        expiresIn = seconds.flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
    }

    /// The credential this response grants, obtained at `start`; `previous` supplies what the response leaves
    /// out (the refresh token when it was not rotated, the token type).
    func credential(obtainedAt start: Date, previous: Credential?) -> Credential {
        var refresh = refreshToken
        if refresh?.isEmpty ?? true { refresh = previous?.refreshToken }
        let type = tokenType.map { $0.lowercased() == "bearer" ? "Bearer" : $0 }
        return Credential(
            accessToken: accessToken,
            refreshToken: refresh,
            expiresAt: expiresIn.map { start.addingTimeInterval($0) },
            tokenType: type ?? previous?.tokenType ?? "Bearer",
            version: previous?.version ?? 0
        )
    }
}

/// Decodes a token response, and classifies a token error response (RFC 6749 §5.2).
struct OAuth2TokenResponseParser: ResponseParser {
    /// The request's `grant_type`, which decides what `invalid_grant` means.
    let grant: String
    /// The secrets the request sent, replaced in the server's `error_description` and `error_uri` (servers echo
    /// them: "Invalid refresh token: <token>"), in every form the redactor knows.
    var secrets = Redactor.Secrets()

    private struct ErrorBody: Decodable {
        let error: String
        let errorDescription: String?
        let errorURI: String?

        private enum CodingKeys: String, CodingKey {
            case error
            case errorDescription = "error_description"
            case errorURI = "error_uri"
        }
    }

    func parse(_ response: ReceivedResponse, context: ParseContext) throws -> OAuth2TokenResponse {
        guard response.status.kind == .successful else { throw failure(for: response) }
        if let tokenError = tokenError(in: response) {
            // An error where a token should be: its mapped outcome, or one that keeps the server's error (a
            // provider's own code), which a custom refresher can read, rather than "not a token response".
            throw outcome(of: tokenError, response: response)
                ?? CourierError(
                    code: .decodingFailed,
                    stage: .parse,
                    message: "the token endpoint answered \(response.status.code) with the error "
                        + "\(tokenError.error.prefix(64)) instead of a token",
                    response: response.head,
                    underlyingError: tokenError
                )
        }
        do {
            let token = try JSONDecoder().decode(OAuth2TokenResponse.self, from: response.body)
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

    /// The error for a token error response: §5.2 codes on a 4xx map to their outcome; anything else (a 5xx, a
    /// body that is not a token error) is ``CourierError/Code/unacceptableStatus``, a transient failure.
    private func failure(for response: ReceivedResponse) -> CourierError {
        let code = response.status.code
        let tokenError = tokenError(in: response)
        if (400..<500).contains(code), let tokenError, let mapped = outcome(of: tokenError, response: response) {
            return mapped
        }
        return CourierError(
            code: .unacceptableStatus,
            stage: .decide,
            message: "the token endpoint answered \(code)" + (tokenError.map { " (\($0.error))" } ?? ""),
            response: response.head,
            underlyingError: tokenError
        )
    }

    /// The outcome of the body's §5.2 error, when its code maps to one. Also for a 2xx answer that carries an error
    /// instead of a token (`200 {"error": "invalid_grant"}`, as some providers answer): the same error as on a 400,
    /// not a malformed token response, which would count as transient and keep a dead grant alive.
    private func outcome(of tokenError: OAuth2TokenError, response: ReceivedResponse) -> CourierError? {
        guard let mapped = tokenError.code(forGrant: grant) else { return nil }
        return CourierError(
            code: mapped,
            stage: .decide,
            message: Self.message(for: mapped, tokenError, grant: grant),
            response: response.head,
            underlyingError: tokenError
        )
    }

    /// The body's token error, its texts printable and without the request's secrets; `nil` when the body is not
    /// one (a token response has no `error` member).
    private func tokenError(in response: ReceivedResponse) -> OAuth2TokenError? {
        guard let body = try? JSONDecoder().decode(ErrorBody.self, from: response.body) else { return nil }
        return OAuth2TokenError(
            error: Self.printable(secrets.scrub(body.error), limit: 64),
            errorDescription: body.errorDescription.map { Self.printable(secrets.scrub($0), limit: 200) },
            errorURI: body.errorURI.map { Self.printable(secrets.scrub($0), limit: 200) },
            status: response.status.code
        )
    }

    private static func message(for code: CourierError.Code, _ error: OAuth2TokenError, grant: String) -> String {
        switch code {
        case .reauthenticationRequired:
            "the token endpoint rejected the \(grant) grant (\(error.error)); sign in again"
        case .scopeRejected:
            "the token endpoint refused the requested scope (\(error.error)); check the scope the client asks for"
        default:
            "the token endpoint rejected the client (\(error.error)); check the client ID, its secret and its "
                + "authentication method (client_secret_basic, client_secret_post or none)"
        }
    }

    /// `text` with everything outside printable ASCII dropped (RFC 6749 §5.2 allows only that), cut to `limit`.
    private static func printable(_ text: String, limit: Int) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { (0x20...0x7E).contains($0.value) }).prefix(limit))
    }
}
