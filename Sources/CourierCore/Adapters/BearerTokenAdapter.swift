import HTTPTypes

/// Attaches `Authorization: Bearer <token>` from an asynchronous token provider, only for trusted origins.
///
/// The token goes only to the origins given here, or, by default, to the origins of the client's configured
/// servers; a request to any other origin (a CDN link the API returned, a redirect target) never carries it.
/// It is never put in a query string. A request whose ``Request/authentication`` is ``AuthenticationRequirement/none``
/// skips this adapter; one that is ``AuthenticationRequirement/required`` fails with
/// ``CourierError/Code/missingCredential`` when the provider has no token or the origin is not trusted.
///
/// ```swift
/// // On every request of a client:
/// let client = Client(server: production, transport: transport).configured {
///     $0.adapters.append(.bearer { await session.token })
/// }
/// // Or on one request type: var adapters: [any RequestAdapter] { standardAdapters + [.bearer { … }] }
/// ```
public struct BearerTokenAdapter: InPlaceAdapter {
    /// Returns the current token, or `nil` when signed out.
    public typealias TokenProvider = @Sendable () async throws -> String?

    /// The origins that receive the token; `nil` means the client's configured servers.
    public let origins: Set<Origin>?
    private let token: TokenProvider

    /// Creates a bearer-token adapter.
    ///
    /// - Parameters:
    ///   - origins: The origins that may receive the token; `nil` (the default) trusts the client's servers.
    ///   - token: Returns the current token; called once per attempt.
    public init(origins: Set<Origin>? = nil, token: @escaping TokenProvider) {
        self.origins = origins
        self.token = token
    }

    /// `bearer`.
    public var name: String { "bearer" }

    /// Attaches the token when the request's origin is trusted.
    public func adapt(_ request: inout OutgoingRequest, context: AdapterContext) async throws {
        guard try CredentialOrigins.allowCredential(on: request, origins: origins, context: context) else {
            return
        }
        guard let token = try await token(), !token.isEmpty else {
            if context.authentication == .required {
                throw CourierError(code: .missingCredential, stage: .adapt, message: "no access token is available")
            }
            return
        }
        request.head.headerFields[.authorization] = try HeaderValidation.validatedValue(
            "Bearer \(token)",
            for: "Authorization",
            redacted: true
        )
    }
}

extension RequestAdapter where Self == BearerTokenAdapter {
    /// Attaches a bearer token for the given origins (by default the client's servers).
    public static func bearer(
        origins: Set<Origin>? = nil,
        token: @escaping BearerTokenAdapter.TokenProvider
    ) -> BearerTokenAdapter {
        BearerTokenAdapter(origins: origins, token: token)
    }
}
