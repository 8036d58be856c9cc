import Foundation
import HTTPTypes

/// Attaches `Authorization: Basic …` (RFC 7617: the user and password, UTF-8, base64), only for trusted origins.
///
/// As with ``BearerTokenAdapter``, the credentials go only to the origins given here, or, by default, to the
/// origins of the client's configured servers: never to a link the API returned on another host, nor after a
/// redirect to one. A request whose ``Request/authentication`` is ``AuthenticationRequirement/none`` skips this
/// adapter; one that is ``AuthenticationRequirement/required`` fails with ``CourierError/Code/missingCredential``
/// when the provider has none. Basic credentials travel in the clear but for TLS: use it over `https`.
///
/// ```swift
/// let client = Client(server: registry, transport: transport).configured {
///     $0.adapters.append(.basic(user: "ci", password: token))
/// }
/// ```
public struct BasicAuthAdapter: InPlaceAdapter {
    /// Returns the current user and password, or `nil` when there are none.
    public typealias CredentialsProvider = @Sendable () async throws -> (user: String, password: String)?

    /// The origins that receive the credentials; `nil` means the client's configured servers.
    public let origins: Set<Origin>?
    private let credentials: CredentialsProvider

    /// Creates a Basic authentication adapter.
    ///
    /// - Parameters:
    ///   - origins: The origins that may receive the credentials; `nil` (the default) trusts the client's servers.
    ///   - credentials: Returns the current user and password; called once per attempt.
    public init(origins: Set<Origin>? = nil, credentials: @escaping CredentialsProvider) {
        self.origins = origins
        self.credentials = credentials
    }

    /// `basic`.
    public var name: String { "basic" }

    /// Attaches the credentials when the request's origin is trusted.
    ///
    /// - Throws: ``CourierError/Code/invalidConfiguration`` for a user containing `:` (RFC 7617 §2: the first `:`
    ///   ends the user), ``CourierError/Code/missingCredential`` as described above.
    public func adapt(_ request: inout OutgoingRequest, context: AdapterContext) async throws {
        guard try CredentialOrigins.allowCredential(on: request, origins: origins, context: context) else {
            return
        }
        guard let (user, password) = try await credentials() else {
            if context.authentication == .required {
                throw CourierError(
                    code: .missingCredential, stage: .adapt, message: "no Basic credentials are available")
            }
            return
        }
        guard !user.contains(":") else {
            throw CourierError(
                code: .invalidConfiguration, stage: .adapt,
                message: "a Basic authentication user cannot contain ':' (RFC 7617)")
        }
        let encoded = Data("\(user):\(password)".utf8).base64EncodedString()
        request.head.headerFields[.authorization] = try HeaderValidation.validatedValue(
            "Basic \(encoded)",
            for: "Authorization",
            redacted: true
        )
    }
}

extension RequestAdapter where Self == BasicAuthAdapter {
    /// Attaches fixed Basic credentials for the given origins (by default the client's servers).
    public static func basic(user: String, password: String, origins: Set<Origin>? = nil) -> BasicAuthAdapter {
        BasicAuthAdapter(origins: origins) { (user, password) }
    }

    /// Attaches Basic credentials from `credentials` for the given origins (by default the client's servers).
    public static func basic(
        origins: Set<Origin>? = nil,
        credentials: @escaping BasicAuthAdapter.CredentialsProvider
    ) -> BasicAuthAdapter {
        BasicAuthAdapter(origins: origins, credentials: credentials)
    }
}
