public import Foundation

/// An OAuth 2.0 credential: the access token sent with requests, the refresh token that renews it, and when it
/// expires.
///
/// ``version`` is the credential's generation, assigned by the ``Authenticator`` (each sign-in and each refresh
/// gives a higher number), so a 401 can be matched to the credential that signed the rejected request.
///
/// A credential never shows its tokens: ``description``, ``debugDescription`` and `dump` print
/// `<redacted>` in their place, so logging a credential by mistake leaks nothing. It is `Codable` so a
/// ``CredentialStore`` can persist it; the encoded form does contain the tokens.
///
/// ```swift
/// let credential = Credential(accessToken: response.accessToken, refreshToken: response.refreshToken,
///                             expiresAt: Date().addingTimeInterval(3600))
/// try await authenticator.signIn(credential)
/// ```
public struct Credential: Codable, Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The access token, sent as `Authorization: <tokenType> <accessToken>`.
    public var accessToken: String
    /// The refresh token that renews the access token, if the server issued one.
    public var refreshToken: String?
    /// When the access token expires, if known.
    public var expiresAt: Date?
    /// The authentication scheme of the `Authorization` header. Default: `Bearer`.
    public var tokenType: String
    /// The generation of this credential, assigned by the ``Authenticator``; higher is newer.
    public var version: Int

    /// Creates a credential.
    ///
    /// - Parameters:
    ///   - accessToken: The access token.
    ///   - refreshToken: The refresh token, if any.
    ///   - expiresAt: When the access token expires, if known.
    ///   - tokenType: The `Authorization` scheme; default `Bearer`.
    ///   - version: The generation; the ``Authenticator`` replaces it when it takes the credential.
    public init(
        accessToken: String,
        refreshToken: String? = nil,
        expiresAt: Date? = nil,
        tokenType: String = "Bearer",
        version: Int = 0
    ) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.tokenType = tokenType
        self.version = version
    }

    private enum CodingKeys: String, CodingKey {
        case accessToken, refreshToken, expiresAt, tokenType, version
    }

    /// Decodes a credential; a missing `tokenType` means `Bearer` and a missing `version` means 0. A `version`
    /// outside 0...2^53 fails with `DecodingError.dataCorrupted` (a store reports `credentialStoreFailed`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        accessToken = try container.decode(String.self, forKey: .accessToken)
        refreshToken = try container.decodeIfPresent(String.self, forKey: .refreshToken)
        expiresAt = try container.decodeIfPresent(Date.self, forKey: .expiresAt)
        tokenType = try container.decodeIfPresent(String.self, forKey: .tokenType) ?? "Bearer"
        version = try container.decodeIfPresent(Int.self, forKey: .version) ?? 0
        // The authenticator numbers the next generation from the stored one: a corrupt or edited file's huge
        // version would overflow there (a crash) rather than fail here with a typed error.
        guard (0...Self.maximumVersion).contains(version) else {
            throw DecodingError.dataCorruptedError(
                forKey: .version, in: container,
                debugDescription: "version \(version) is outside 0...\(Self.maximumVersion)")
        }
    }

    /// The largest ``version`` a stored credential may have (2^53, the largest integer every JSON reader keeps).
    static let maximumVersion = 1 << 53

    /// The value of the `Authorization` header: `<tokenType> <accessToken>`.
    public var authorizationValue: String { "\(tokenType) \(accessToken)" }

    /// Whether the access token expires less than `window` after `now` (or has expired). A credential without
    /// ``expiresAt`` never expires by the clock; only a 401 renews it.
    public func expires(within window: Duration, of now: Date) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt.timeIntervalSince(now) < Self.seconds(window)
    }

    /// The type, version and expiry, with both tokens redacted.
    public var description: String {
        let expiry = expiresAt.map { "\($0.timeIntervalSince1970)" } ?? "nil"
        let refresh = refreshToken == nil ? "nil" : Redactor.placeholder
        return "Credential(tokenType: \(tokenType), version: \(version), accessToken: \(Redactor.placeholder), "
            + "refreshToken: \(refresh), expiresAt: \(expiry))"
    }

    /// The same as ``description``: tokens redacted.
    public var debugDescription: String { description }

    /// A mirror with the tokens redacted, so `dump(credential)` leaks nothing.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "accessToken": Redactor.placeholder,
                "refreshToken": refreshToken == nil ? "nil" : Redactor.placeholder,
                "expiresAt": expiresAt as Any,
                "tokenType": tokenType,
                "version": version,
            ],
            displayStyle: .struct
        )
    }

    /// `duration` in seconds, as a `TimeInterval` (for comparisons with `Date`).
    static func seconds(_ duration: Duration) -> TimeInterval {
        let parts = duration.components
        return TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
    }
}
