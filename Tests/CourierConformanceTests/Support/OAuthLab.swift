import Courier
import Foundation
import HTTPTypes
import Testing

/// The Authlib OAuth 2.0 lab (`scripts/oauth-authlib`): a real authorization server at `COURIER_OAUTH_URL`, the
/// clients it registered (read from its `GET /test/clients`, the one place that defines them), and its test hooks.
///
/// Every call to the lab goes over the transport under test. Each test signs in a user of its own
/// (``newUser(_:)``), so the server's per-user counters and token families belong to that test alone.
struct OAuthLab: Sendable {
    /// A client the server registered, by what it is for.
    enum Role: String, Sendable, CaseIterable, CustomTestStringConvertible {
        /// Confidential, `client_secret_basic`; a `:` in its ID. Password and refresh-token grants.
        case basic = "client_secret_basic"
        /// Confidential, `client_secret_post`. Password and refresh-token grants.
        case post = "client_secret_post"
        /// Public, `none`. Password and refresh-token grants.
        case none
        /// Confidential, `client_secret_basic`, for the client-credentials grant (scopes `read write`).
        case service = "client_credentials"

        var testDescription: String { rawValue }
        /// The three methods a user's app may authenticate with.
        static let userClients: [Role] = [.basic, .post, .none]
    }

    /// A client as the server lists it.
    struct RegisteredClient: Decodable, Sendable {
        let clientID: String
        let clientSecret: String?
        let method: String
        let grantTypes: [String]
        let scope: String

        private enum CodingKeys: String, CodingKey {
            case clientID = "client_id"
            case clientSecret = "client_secret"
            case method = "token_endpoint_auth_method"
            case grantTypes = "grant_types"
            case scope
        }
    }

    /// `GET /test/clients`.
    struct Registry: Decodable, Sendable {
        let clients: [RegisteredClient]
        let userPassword: String
        let tokenPath: String
        let revocationPath: String
        let defaultLifetime: Int

        private enum CodingKeys: String, CodingKey {
            case clients
            case userPassword = "user_password"
            case tokenPath = "token_path"
            case revocationPath = "revocation_path"
            case defaultLifetime = "default_lifetime"
        }
    }

    /// `GET /test/stats`: what the server has seen since it started (or since `/test/reset`).
    struct Stats: Decodable, Sendable {
        /// Token requests per `grant_type`, failed ones included.
        let tokenRequests: [String: Int]
        /// Token requests per client ID (as the request named it) and `grant_type`.
        let byClient: [String: [String: Int]]
        /// Token requests per user and `grant_type` (password and refresh-token grants).
        let byUser: [String: [String: Int]]
        /// Error responses per `grant_type` and `error`.
        let errors: [String: [String: Int]]
        /// Presentations of a rotated-out refresh token, per user.
        let reuseByUser: [String: Int]
        /// Answers of `GET /api/me` per status code.
        let resource: [String: Int]
        /// Rejections held back until a refresh (`/test/hold`), and those that waited in vain (10 s).
        let held: Int
        let holdTimeouts: Int

        private enum CodingKeys: String, CodingKey {
            case tokenRequests = "token_requests"
            case byClient = "by_client"
            case byUser = "by_user"
            case errors
            case reuseByUser = "reuse_by_user"
            case resource
            case held
            case holdTimeouts = "hold_timeouts"
        }

        func requests(_ grant: String, client: String) -> Int { byClient[client]?[grant] ?? 0 }
        func requests(_ grant: String, user: String) -> Int { byUser[user]?[grant] ?? 0 }
        func errors(_ grant: String, _ error: String) -> Int { errors[grant]?[error] ?? 0 }
        func resource(_ status: Int) -> Int { resource[String(status)] ?? 0 }
    }

    let url: URL
    /// A plain client for the lab on the transport under test: no authenticator.
    let client: Client
    let registry: Registry

    static let missingReason = "COURIER_OAUTH_URL is not set: run scripts/test, or source scripts/oauth-authlib"

    /// The running lab; skips the test case (``skipCase(_:sourceLocation:)``) when it is not running.
    static func running(on transport: TransportKind, _ function: String = #function) async throws -> OAuthLab {
        guard let url = ProcessInfo.processInfo.environment["COURIER_OAUTH_URL"].flatMap(URL.init(string:)) else {
            try skipCase("\(function): \(missingReason)")
        }
        let client = Client(server: Server(baseURL: url), transport: transport.make())
        let registry = try await client.send(LabCall<Registry>(path: "/test/clients"))
        return OAuthLab(url: url, client: client, registry: registry)
    }

    /// A user name no other test uses.
    static func newUser(_ label: String) -> String {
        "\(label)-\(UUID().uuidString.prefix(8).lowercased())"
    }

    func registered(_ role: Role) throws -> RegisteredClient {
        let match = registry.clients.first {
            role == .service
                ? $0.grantTypes.contains("client_credentials")
                : $0.method == role.rawValue && $0.grantTypes.contains("password")
        }
        return try #require(match, "the lab registered no \(role.rawValue) client")
    }

    /// The client authentication the server registered `role` with.
    func authentication(_ role: Role) throws -> OAuth2ClientAuthentication {
        let client = try registered(role)
        switch client.method {
        case "client_secret_basic":
            return .clientSecretBasic(clientID: client.clientID, clientSecret: try #require(client.clientSecret))
        case "client_secret_post":
            return .clientSecretPost(clientID: client.clientID, clientSecret: try #require(client.clientSecret))
        default:
            return .none(clientID: client.clientID)
        }
    }

    /// A refresh-token refresher for `role`, authenticating as `authentication` (the registered method by default).
    func refresher(
        _ role: Role,
        authentication: OAuth2ClientAuthentication? = nil
    ) throws -> OAuth2RefreshTokenRefresher {
        OAuth2RefreshTokenRefresher(
            client: client, path: registry.tokenPath, authentication: try authentication ?? self.authentication(role))
    }

    /// Signs `user` in with the password grant through `role` (sent by the test, not by Courier's OAuth code) and
    /// returns the credential, with its expiry as the server stated it.
    func signIn(_ role: Role, user: String) async throws -> Credential {
        let start = Date()
        let token = try await client.send(
            authenticated(
                LabCall<TokenBody>(
                    path: registry.tokenPath,
                    form: ["grant_type": "password", "username": user, "password": registry.userPassword]
                ),
                as: role
            )
        )
        return Credential(
            accessToken: token.accessToken,
            refreshToken: token.refreshToken,
            expiresAt: token.expiresIn.map { start.addingTimeInterval($0) }
        )
    }

    /// Revokes `token` at the RFC 7009 endpoint, authenticated as `role`.
    func revoke(_ token: String, hint: String, as role: Role) async throws {
        _ = try await client.send(
            authenticated(
                LabCall<JSONValue>(path: registry.revocationPath, form: ["token": token, "token_type_hint": hint]),
                as: role
            )
        )
    }

    /// `call` with `role`'s client authentication, done the interoperable way: ID and secret percent-encoded
    /// (everything but RFC 3986's unreserved characters, a space as `%20`) before Base64 for `client_secret_basic`.
    func authenticated<Value>(_ call: LabCall<Value>, as role: Role) throws -> LabCall<Value> {
        let client = try registered(role)
        var call = call
        switch client.method {
        case "client_secret_basic":
            let secret = try #require(client.clientSecret)
            call.headers = [
                "Authorization": Self.basic(Self.percentEncoded(client.clientID), Self.percentEncoded(secret))
            ]
        case "client_secret_post":
            call.form?["client_id"] = client.clientID
            call.form?["client_secret"] = client.clientSecret
        default:
            call.form?["client_id"] = client.clientID
        }
        return call
    }

    /// `Basic base64(user ":" password)`, with `user` and `password` as given.
    static func basic(_ user: String, _ password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// `text` with every byte of its UTF-8 outside RFC 3986's unreserved set percent-encoded (a space as `%20`).
    static func percentEncoded(_ text: String) -> String {
        var unreserved = CharacterSet(charactersIn: "-._~")
        unreserved.formUnion(CharacterSet(charactersIn: "a"..."z"))
        unreserved.formUnion(CharacterSet(charactersIn: "A"..."Z"))
        unreserved.formUnion(CharacterSet(charactersIn: "0"..."9"))
        return text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// Makes the server issue `role`'s access tokens for `seconds` (`nil`: its default lifetime) from now on.
    func setLifetime(_ seconds: Int?, of role: Role) async throws {
        let form = [
            "client_id": try registered(role).clientID, "expires_in": String(seconds ?? registry.defaultLifetime),
        ]
        _ = try await client.send(LabCall<JSONValue>(path: "/test/lifetime", form: form))
    }

    func stats() async throws -> Stats {
        try await client.send(LabCall<Stats>(path: "/test/stats"))
    }

    /// Makes the server treat `accessToken` as expired from now on (`/api/me` answers 401 `invalid_token`).
    func expire(_ accessToken: String) async throws {
        _ = try await client.send(LabCall<JSONValue>(path: "/test/expire", form: ["access_token": accessToken]))
    }

    /// Makes the server hold back `count` of `accessToken`'s rejections after the first until a refresh has rotated
    /// its refresh token, so they reach the client after the refresh.
    func hold(_ count: Int, rejectionsOf accessToken: String) async throws {
        let form = ["access_token": accessToken, "count": String(count)]
        _ = try await client.send(LabCall<JSONValue>(path: "/test/hold", form: form))
    }

    /// Revokes `accessToken` at the server, outside RFC 7009 (a test hook): `/api/me` answers 401 from now on.
    func revokeAccess(_ accessToken: String) async throws {
        _ = try await client.send(LabCall<JSONValue>(path: "/test/revoke", form: ["access_token": accessToken]))
    }
}

/// A call to the lab: a `GET`, or a form `POST` when it has a form. Never carries an authenticator's credential.
struct LabCall<Value: Sendable>: Request {
    typealias Response = Value
    var path: String
    var form: [String: String]?
    var headers: RequestHeaders = ["Accept": "application/json"]
    let parser: any ResponseParser<Value>

    var method: HTTPRequest.Method { form == nil ? .get : .post }
    var body: RequestBody? { form.map { .form($0) } }
    var authentication: AuthenticationRequirement { .none }
    var cachePolicy: CachePolicy { .bypass }
}

extension LabCall where Value: Decodable {
    init(path: String, form: [String: String]? = nil) {
        self.init(path: path, form: form, parser: JSONParser<Value>())
    }
}

/// A token response, as the test reads it (not Courier's parser).
struct TokenBody: Decodable, Sendable {
    let accessToken: String
    let refreshToken: String?
    let expiresIn: TimeInterval?

    private enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case refreshToken = "refresh_token"
        case expiresIn = "expires_in"
    }
}

/// `GET /api/me`, the protected resource: needs the authenticator's credential.
struct GetMe: Request {
    typealias Response = Me
    var path: String { "/api/me" }
    var authentication: AuthenticationRequirement { .required }
}

/// Who the server says the access token belongs to.
struct Me: Decodable, Sendable {
    /// The user; `nil` for a client-credentials token.
    let user: String?
    let client: String
    /// The server's short ID of the token (`t17`).
    let token: String
}
