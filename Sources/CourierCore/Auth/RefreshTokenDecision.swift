import HTTPTypes

/// Answers a rejected credential with one refresh and one replay of the request.
///
/// It applies to a response to a request signed by its ``Authenticator`` (recognised by the `Authorization`
/// header it carried) when:
/// - the status is 401 and `WWW-Authenticate` is absent or offers a `Bearer` challenge (not one with
///   `error="insufficient_scope"`); a 401 challenging another scheme (`Basic` from a downstream service) and a
///   403 `insufficient_scope` are left alone (RFC 6750 §3.1), or
/// - your `rejectedWhen` predicate says so (an API that answers `403 {"code":999}` for an expired token).
///
/// It then calls ``Authenticator/refresh(rejected:)`` (one refresh is shared by every request rejected with the
/// same credential; a request signed with an older one just picks up the newer) and restarts the call, so the
/// adapters run again and sign it with the new credential. It does so **once per call**: the restart replaces it
/// with a spent copy, so a second rejection goes on to the next decisions (by default failing with
/// ``CourierError/Code/unacceptableStatus``). A request whose body cannot be sent again is not replayed.
///
/// In the trace it reads `refreshToken ↻`. Install it with
/// ``Client/Configuration/authenticate(with:origins:rejectedWhen:)``, which puts it right after the redirect
/// decision and before retries.
public struct RefreshTokenDecision: Decision {
    /// The authenticator that renews the credential.
    public let authenticator: Authenticator
    /// Whether this call already used its one refresh.
    public let isSpent: Bool
    private let rejectedWhen: @Sendable (ReceivedResponse) -> Bool

    /// Creates a refresh decision.
    ///
    /// - Parameters:
    ///   - authenticator: The authenticator that signed the requests and renews the credential.
    ///   - rejectedWhen: Responses, besides a Bearer 401, that mean the credential was rejected; it sees the
    ///     status, header fields and body.
    public init(
        authenticator: Authenticator,
        rejectedWhen: @escaping @Sendable (ReceivedResponse) -> Bool = { _ in false }
    ) {
        self.init(authenticator: authenticator, isSpent: false, rejectedWhen: rejectedWhen)
    }

    private init(
        authenticator: Authenticator,
        isSpent: Bool,
        rejectedWhen: @escaping @Sendable (ReceivedResponse) -> Bool
    ) {
        self.authenticator = authenticator
        self.isSpent = isSpent
        self.rejectedWhen = rejectedWhen
    }

    /// `refreshToken`.
    public var name: String { "refreshToken" }

    /// Applies once per call, to a rejection of a request this authenticator signed.
    public func shouldApply(to response: ReceivedResponse, context: DecisionContext) -> Bool {
        guard !isSpent, signingVersion(context) != nil else { return false }
        return Self.isBearerRejection(response) || rejectedWhen(response)
    }

    /// Renews the credential (or picks up a newer one) and restarts the call with this decision spent.
    ///
    /// A request whose body cannot be sent again (a one-shot stream) is not replayed: its rejection goes on to the
    /// next decisions, and the authenticator notes the credential as rejected, so the next request renews it before
    /// it is signed instead of being rejected with it too.
    ///
    /// - Throws: ``CourierError/Code/reauthenticationRequired``, ``CourierError/Code/excessiveRefresh`` or the
    ///   refresh's transient error, at the ``CourierError/Stage/decide`` stage; `CancellationError`.
    public func decide(_ response: ReceivedResponse, context: DecisionContext) async throws -> DecisionAction {
        guard let version = signingVersion(context) else { return .continue(with: response) }
        guard context.canResendBody else {
            await authenticator.noteRejected(version: version)
            return .continue(with: response)
        }
        do {
            _ = try await authenticator.refresh(rejected: version)
        } catch var error as CourierError {
            error.stage = .decide
            throw error
        }
        // A sign-in while the refresh was out started another session (another account, perhaps), and forgot this
        // request's signature: its credential does not replay a request of the session before.
        guard signingVersion(context) != nil else { return .continue(with: response) }
        context.events?.emit(.refreshed, attempt: context.attempt)
        let spent = RefreshTokenDecision(authenticator: authenticator, isSpent: true, rejectedWhen: rejectedWhen)
        return .restart(with: context.decisions(replacingCurrentWith: spent))
    }

    /// Whether `response` is a 401 whose challenge (if any) is Bearer, and not `insufficient_scope`.
    public static func isBearerRejection(_ response: ReceivedResponse) -> Bool {
        guard response.status.code == 401 else { return false }
        let challenges = AuthenticationChallenge.parse(response.head.headerFields[values: .wwwAuthenticate])
        guard !challenges.isEmpty else { return true }
        return challenges.contains { $0.scheme == "bearer" && $0.parameters["error"] != "insufficient_scope" }
    }

    /// The version of the credential that signed the request, if this authenticator signed it.
    private func signingVersion(_ context: DecisionContext) -> Int? {
        guard let authorization = context.request.headerFields[.authorization] else { return nil }
        return authenticator.signatures.version(signing: authorization)
    }
}

extension Decision where Self == RefreshTokenDecision {
    /// Refreshes the credential once on a rejection (see ``RefreshTokenDecision``).
    public static func refreshToken(
        _ authenticator: Authenticator,
        rejectedWhen: @escaping @Sendable (ReceivedResponse) -> Bool = { _ in false }
    ) -> Self {
        RefreshTokenDecision(authenticator: authenticator, rejectedWhen: rejectedWhen)
    }
}
