import HTTPTypes

/// Signs requests with an ``Authenticator``'s credential: `Authorization: <type> <token>`, only for trusted
/// origins.
///
/// The credential goes only to the origins given here or, by default, to the origins of the client's servers:
/// a request to any other origin (a CDN link the API returned, a redirect target) never carries it, and it is
/// never put in a query string. Per request, ``Request/authentication`` decides:
/// ``AuthenticationRequirement/none`` skips this adapter (login and token endpoints),
/// ``AuthenticationRequirement/optional`` signs when signed in, ``AuthenticationRequirement/required`` fails with
/// ``CourierError/Code/missingCredential`` when it cannot sign.
///
/// It runs on every attempt, so a request replayed after a refresh carries the new token. Signing may wait for
/// a refresh in flight (see ``Authenticator/validCredential()``); after the session ended (the refresh token was
/// rejected), requests that would be signed fail with ``CourierError/Code/reauthenticationRequired`` until the
/// app signs in again or signs out.
///
/// ```swift
/// configuration.adapters.append(.authentication(authenticator))
/// ```
public struct AuthenticationAdapter: InPlaceAdapter {
    /// The authenticator whose credential is attached.
    public let authenticator: Authenticator
    /// The origins that receive the credential; `nil` means the client's servers.
    public let origins: Set<Origin>?

    /// Creates an adapter.
    ///
    /// - Parameters:
    ///   - authenticator: Whose credential to attach.
    ///   - origins: The origins that may receive it; `nil` (the default) trusts the client's servers.
    public init(authenticator: Authenticator, origins: Set<Origin>? = nil) {
        self.authenticator = authenticator
        self.origins = origins
    }

    /// `authentication`.
    public var name: String { "authentication" }

    /// Attaches the credential when the request's origin is trusted.
    ///
    /// - Throws: ``CourierError/Code/missingCredential`` for a required credential that cannot be attached;
    ///   ``CourierError/Code/reauthenticationRequired`` after the session ended; a refresh's error when the
    ///   credential must be renewed first and cannot be.
    public func adapt(_ request: inout OutgoingRequest, context: AdapterContext) async throws {
        guard try CredentialOrigins.allowCredential(on: request, origins: origins, context: context) else {
            return
        }
        let credential: Credential?
        do {
            credential = try await authenticator.validCredential()
        } catch var error as CourierError {
            error.stage = .adapt
            throw error
        }
        guard let credential, !credential.accessToken.isEmpty else {
            if context.authentication == .required {
                throw CourierError(code: .missingCredential, stage: .adapt, message: "signed out: no credential")
            }
            return
        }
        request.head.headerFields[.authorization] = try HeaderValidation.validatedValue(
            credential.authorizationValue,
            for: "Authorization",
            redacted: true
        )
    }
}

extension RequestAdapter where Self == AuthenticationAdapter {
    /// Signs requests with `authenticator`'s credential, for the given origins (by default the client's servers).
    public static func authentication(_ authenticator: Authenticator, origins: Set<Origin>? = nil) -> Self {
        AuthenticationAdapter(authenticator: authenticator, origins: origins)
    }
}
