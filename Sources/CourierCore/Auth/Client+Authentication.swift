extension Client.Configuration {
    /// Signs requests with `authenticator`'s credential and renews it once when the server rejects it.
    ///
    /// Appends an ``AuthenticationAdapter`` to ``adapters`` and inserts a ``RefreshTokenDecision`` into
    /// ``decisions`` right after the ``RedirectDecision`` (first when there is none), so redirects are followed
    /// before and retries happen after a refresh. Calling it again replaces both.
    ///
    /// ```swift
    /// let client = base.configured {
    ///     $0.authenticate(with: authenticator, rejectedWhen: { $0.status.code == 403 && isExpiredTokenBody($0.body) })
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - authenticator: Owns the credential and its renewal.
    ///   - origins: The origins that may receive the credential; `nil` (the default) trusts the client's servers.
    ///   - rejectedWhen: Responses, besides a 401 with a Bearer challenge or none, that mean the credential was
    ///     rejected.
    public mutating func authenticate(
        with authenticator: Authenticator,
        origins: Set<Origin>? = nil,
        rejectedWhen: @escaping @Sendable (ReceivedResponse) -> Bool = { _ in false }
    ) {
        adapters.removeAll { $0 is AuthenticationAdapter }
        decisions.removeAll { $0 is RefreshTokenDecision }
        adapters.append(AuthenticationAdapter(authenticator: authenticator, origins: origins))
        let decision = RefreshTokenDecision(authenticator: authenticator, rejectedWhen: rejectedWhen)
        if let redirect = decisions.firstIndex(where: { $0 is RedirectDecision }) {
            decisions.insert(decision, at: redirect + 1)
        } else {
            decisions.insert(decision, at: 0)
        }
    }
}
