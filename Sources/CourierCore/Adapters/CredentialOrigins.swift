/// The origin rule every credential-attaching adapter follows.
enum CredentialOrigins {
    /// Whether `request` may carry a credential: the request wants one and its origin is trusted (`origins`, or
    /// the client's servers when `nil`).
    ///
    /// - Throws: ``CourierError/Code/missingCredential`` when the request requires a credential but its origin is
    ///   not trusted.
    static func allowCredential(
        on request: OutgoingRequest,
        origins: Set<Origin>?,
        context: AdapterContext
    ) throws -> Bool {
        guard context.authentication != .none else { return false }
        let trusted = origins ?? Set(context.knownServers.compactMap(\.origin))
        if let origin = request.origin, trusted.contains(origin) { return true }
        if context.authentication == .required {
            throw CourierError(
                code: .missingCredential,
                stage: .adapt,
                message: "the request's origin is not one the credential may be sent to"
            )
        }
        return false
    }
}
