import Foundation

/// How an OAuth 2.0 client proves who it is to the token endpoint (RFC 6749 §2.3, the `token_endpoint_auth_method`
/// of RFC 7591).
///
/// Pick the method the authorization server registered the client with; a mismatch fails every token request
/// with ``CourierError/Code/clientAuthenticationFailed`` (a configuration error, never a sign-out).
///
/// ```swift
/// let auth = OAuth2ClientAuthentication.clientSecretBasic(clientID: "gateway", clientSecret: secret)
/// let refresher = OAuth2ClientCredentialsRefresher(client: base, path: "/oauth/token", authentication: auth)
/// ```
public enum OAuth2ClientAuthentication: Sendable, Hashable {
    /// `client_secret_basic`: HTTP Basic authentication with the client ID and secret, each
    /// `application/x-www-form-urlencoded` before they are joined with `:` and Base64-encoded (RFC 6749 §2.3.1).
    /// Every server must support it, so it is the usual default of confidential clients.
    case clientSecretBasic(clientID: String, clientSecret: String)
    /// `client_secret_post`: `client_id` and `client_secret` as fields of the form body (RFC 6749 §2.3.1, which
    /// says servers may support it; prefer ``clientSecretBasic(clientID:clientSecret:)``).
    case clientSecretPost(clientID: String, clientSecret: String)
    /// `none`: a public client (an app, a command-line tool, anything that cannot keep a secret) sends only its
    /// `client_id` in the body (RFC 6749 §3.2.1, RFC 7591 §2).
    case none(clientID: String)

    /// The client identifier.
    public var clientID: String {
        switch self {
        case .clientSecretBasic(let id, _), .clientSecretPost(let id, _), .none(let id): id
        }
    }

    /// The method's registered name: `client_secret_basic`, `client_secret_post` or `none`.
    public var methodName: String {
        switch self {
        case .clientSecretBasic: "client_secret_basic"
        case .clientSecretPost: "client_secret_post"
        case .none: "none"
        }
    }

    /// Adds the client's authentication to a token request's form and headers.
    func apply(to form: inout [String: String], headers: inout RequestHeaders) {
        switch self {
        case .clientSecretBasic(let id, let secret):
            headers.append(name: "Authorization", value: Self.basicAuthorization(clientID: id, clientSecret: secret))
        case .clientSecretPost(let id, let secret):
            form["client_id"] = id
            form["client_secret"] = secret
        case .none(let id):
            form["client_id"] = id
        }
    }

    /// The `Authorization` value of `client_secret_basic`: `Basic base64(formEncoded(id) ":" formEncoded(secret))`.
    ///
    /// RFC 6749 §2.3.1 encodes both with `application/x-www-form-urlencoded` first, so a `:` in the ID, or a `+`,
    /// `%` or non-ASCII character in either, reaches the server intact. A space is written `%20`, not `+`: a form
    /// decoder reads both as a space, but servers that only percent-decode (Authlib) would read a `+` literally.
    static func basicAuthorization(clientID: String, clientSecret: String) -> String {
        let user = PercentEncoding.encode(clientID, allowing: .unreserved)
        let password = PercentEncoding.encode(clientSecret, allowing: .unreserved)
        return "Basic " + Data((user + ":" + password).utf8).base64EncodedString()
    }
}

extension OAuth2ClientAuthentication: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The method and client ID; never the secret.
    public var description: String { "\(methodName)(\(clientID))" }

    /// The same as ``description``: `debugPrint` and `String(reflecting:)` leak nothing either.
    public var debugDescription: String { description }

    /// A mirror with the secret redacted, so `dump(_:)` leaks nothing.
    public var customMirror: Mirror {
        switch self {
        case .clientSecretBasic(let id, _), .clientSecretPost(let id, _):
            Mirror(
                self, children: ["method": methodName, "clientID": id, "clientSecret": Redactor.placeholder],
                displayStyle: .enum)
        case .none(let id):
            Mirror(self, children: ["method": methodName, "clientID": id], displayStyle: .enum)
        }
    }
}
