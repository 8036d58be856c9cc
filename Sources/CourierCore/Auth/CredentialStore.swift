/// Where an ``Authenticator`` keeps its ``Credential`` between launches: memory, a file, the Keychain.
///
/// The authenticator calls ``load()`` once, lazily, before the first request that needs a credential; ``save(_:)``
/// after every sign-in and refresh (a rotated refresh token is saved before any waiting request resumes); and
/// ``clear()`` on sign-out and when the server rejects the refresh token. Calls come from the authenticator
/// actor one at a time, but a store may be shared, so implementations must be safe to call concurrently.
///
/// ```swift
/// let store = FileCredentialStore(url: applicationSupport.appendingPathComponent("credential.json"))
/// let authenticator = Authenticator(store: store, refresher: refresher)
/// ```
public protocol CredentialStore: Sendable {
    /// Returns the stored credential, or `nil` when there is none.
    ///
    /// - Throws: ``CourierError`` with ``CourierError/Code/credentialStoreFailed`` when the stored value cannot
    ///   be read or is corrupt.
    func load() async throws -> Credential?

    /// Replaces the stored credential with `credential`, atomically.
    ///
    /// - Throws: ``CourierError`` with ``CourierError/Code/credentialStoreFailed`` when it cannot be written.
    func save(_ credential: Credential) async throws

    /// Deletes the stored credential; succeeds when there is none.
    ///
    /// - Throws: ``CourierError`` with ``CourierError/Code/credentialStoreFailed`` when it cannot be deleted.
    func clear() async throws
}

/// A ``CredentialStore`` that keeps the credential in memory only: nothing survives the process.
///
/// ```swift
/// let authenticator = Authenticator(store: InMemoryCredentialStore(signedIn), refresher: refresher)
/// ```
public actor InMemoryCredentialStore: CredentialStore {
    private var credential: Credential?

    /// Creates a store holding `credential` (none by default).
    public init(_ credential: Credential? = nil) {
        self.credential = credential
    }

    /// Returns the credential held.
    public func load() -> Credential? { credential }

    /// Holds `credential`.
    public func save(_ credential: Credential) { self.credential = credential }

    /// Forgets the credential.
    public func clear() { credential = nil }
}
