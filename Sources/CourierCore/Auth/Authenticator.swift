public import Foundation

/// Owns the OAuth 2.0 credential of a client: loads it from its store, attaches it, and renews it, once, when it
/// expires or the server rejects it.
///
/// Wire it into a client with ``Client/Configuration/authenticate(with:origins:rejectedWhen:)``: an
/// ``AuthenticationAdapter`` then signs requests to the client's own origins with ``validCredential()``, and a
/// ``RefreshTokenDecision`` answers a 401 with ``refresh(rejected:)`` and replays the request once.
///
/// The contract:
/// - **Proactive refresh.** A credential that expires within ``refreshWindow`` is renewed before it is used, unless
///   its refresher cannot renew it (``TokenRefresher/canRenew(_:)``): then it is used until it expires.
///   When that fails transiently while the credential has not yet expired, the credential is used anyway.
/// - **Single flight.** However many requests are rejected with the same credential version, one refresh runs;
///   they all wait for it and resume with its result. A request rejected with an *older* version gets the
///   current credential at once, without a refresh. The refresh runs in a task of its own: cancelling a waiting
///   request ends that request's wait promptly (with `CancellationError`) and leaves the refresh to the others.
/// - **Persistence first.** A new credential, with a rotated refresh token, is saved to the store before any
///   waiter resumes. Store operations run one at a time, in the order the session changed.
/// - **Dead grants end the session.** When the refresher throws ``CourierError/Code/reauthenticationRequired``
///   (`invalid_grant`), the credential is removed from memory and store, every waiter fails with that code,
///   ``events`` delivers ``AuthenticationEvent/sessionEnded(_:)``, and every later call fails the same way at
///   once, without a request to the token endpoint, until ``signIn(_:)``.
/// - **Transient failures keep the credential.** A 5xx, a timeout or a lost connection fails the waiters with
///   that error (its code kept); the next rejected request may try again.
/// - **Storm guard.** At most ``refreshLimit`` refreshes start per interval (5 per 30 s by default); one more
///   fails with ``CourierError/Code/excessiveRefresh``.
///
/// ```swift
/// let base = Client(server: api, transport: transport)
/// let authenticator = Authenticator(
///     store: FileCredentialStore(url: credentialFile),
///     refresher: OAuth2RefreshTokenRefresher(client: base, path: "/oauth/token", clientID: "cli")
/// )
/// let client = base.configured { $0.authenticate(with: authenticator) }
/// try await authenticator.signIn(Credential(accessToken: access, refreshToken: refresh, expiresAt: expiry))
/// let profile = try await client.send(GetProfile())     // refreshed and replayed on a 401, transparently
/// ```
public actor Authenticator {
    /// How many refreshes may start within a time interval: the storm guard.
    public struct RefreshLimit: Hashable, Sendable {
        /// The most refreshes that may start within ``interval``.
        public var maximumRefreshes: Int
        /// The sliding window the refreshes are counted in.
        public var interval: Duration

        /// Creates a limit of `maximumRefreshes` per `interval`.
        public init(maximumRefreshes: Int, interval: Duration) {
            self.maximumRefreshes = maximumRefreshes
            self.interval = interval
        }

        /// 5 refreshes per 30 seconds (as Alamofire's `RefreshWindow`).
        public static let `default` = RefreshLimit(maximumRefreshes: 5, interval: .seconds(30))
    }

    enum Session {
        /// The store has not been read yet.
        case unloaded
        /// No credential: requests go without one.
        case signedOut
        /// Signed in with this credential.
        case active(Credential)
        /// The server rejected the refresh token: every call fails until ``signIn(_:)``.
        case ended
    }

    /// One refresh in progress and the callers waiting for it.
    struct Flight {
        let id: Int
        /// The version being replaced; `nil` while acquiring a first credential (``TokenAcquirer``).
        let version: Int?
        var waiters: [(id: Int, continuation: CheckedContinuation<Credential, any Error>)] = []
    }

    /// A credential that expires sooner than this is refreshed before use (unless its refresher cannot renew it).
    /// Default: 60 seconds.
    public nonisolated let refreshWindow: Duration
    /// The storm guard. Default: ``RefreshLimit/default``.
    public nonisolated let refreshLimit: RefreshLimit
    /// What happens to the session: sign-ins, refreshes, its end. One consumer; the newest 64 events are
    /// buffered while nobody listens.
    public nonisolated let events: AsyncStream<AuthenticationEvent>

    let store: any CredentialStore
    let refresher: any TokenRefresher
    let now: @Sendable () -> Date
    let eventSink: AsyncStream<AuthenticationEvent>.Continuation
    /// Recent signatures, readable without suspending (for ``RefreshTokenDecision/shouldApply(to:context:)``).
    nonisolated let signatures = SignatureLedger()

    var session = Session.unloaded
    var latestVersion = 0
    /// The current version, once a server has rejected it (no fallback to it after a failed refresh).
    var rejectedVersion: Int?
    /// The refresh new callers join: the newest one.
    var flight: Flight?
    /// Refreshes that a newer one replaced as ``flight`` before they finished (after a sign-in or sign-out, a
    /// refresh of the new session can start while one of the old is still out): their waiters are resumed when
    /// they finish, as the current flight's are.
    var supersededFlights: [Int: Flight] = [:]
    var lastID = 0
    var refreshStarts: [Date] = []
    var storeTail: Task<Void, Never>?
    /// The credential this authenticator last read from or wrote to the store: a different one found there
    /// before a refresh is another process's renewal.
    var knownStored: Credential?
    /// The version of the credential the last refresh installed, and the seconds it had to live when it was asked
    /// for: see ``window(for:)``.
    var renewedLifetime: (version: Int, seconds: TimeInterval)?
    /// Whether the store holds a credential older than the session's, which a sign-in could not replace: none of
    /// it is adopted as a renewal until a save succeeds.
    var storeIsStale = false
    /// A renewed credential the store did not take (its save failed), and when to save it again: at the next call
    /// that uses it, then at most every 5 seconds. A rotated refresh token exists only here until then; an app
    /// killed before it reaches the store would start again with the old one, which the server refuses.
    var unsaved: (version: Int, retryAt: Date)?
    /// The sign-outs so far: a sign-out during an acquisition leaves the session as signed out as before, and
    /// its count tells that it happened (the acquired credential is then dropped, not saved after the clear).
    var signOutCount = 0

    /// Creates an authenticator.
    ///
    /// Nothing is read from `store` until the first call that needs the credential.
    ///
    /// - Parameters:
    ///   - store: Where the credential is kept between launches; in memory by default.
    ///   - refresher: What renews the credential, such as ``OAuth2RefreshTokenRefresher``.
    ///   - refreshWindow: Refresh a credential that expires sooner than this; default 60 seconds. For a credential a
    ///     refresh gave (or a fleet watcher installed, counted from its arrival), at most half the lifetime it was
    ///     given (a 60-second token is renewed 30 seconds before it expires, not on every call).
    ///   - refreshLimit: The storm guard; default 5 refreshes per 30 seconds.
    ///   - now: The current time, for expiry and the storm guard; inject a fixed clock in tests.
    public init(
        store: any CredentialStore = InMemoryCredentialStore(),
        refresher: any TokenRefresher,
        refreshWindow: Duration = .seconds(60),
        refreshLimit: RefreshLimit = .default,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.store = store
        self.refresher = refresher
        self.refreshWindow = refreshWindow
        self.refreshLimit = refreshLimit
        self.now = now
        (events, eventSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(64))
    }

    deinit {
        eventSink.finish()
    }

    /// The credential to sign a request with: the current one, renewed first when it expires within
    /// ``refreshWindow`` (and its refresher can renew it) or while a refresh of it is in flight; `nil` when signed
    /// out.
    ///
    /// When there is no credential and the refresher is a ``TokenAcquirer`` (the client-credentials grant), one is
    /// acquired first, in a single flight shared by every concurrent caller.
    ///
    /// Concurrent callers share one refresh. Cancelling the caller ends its wait with `CancellationError`.
    ///
    /// - Throws: ``CourierError/Code/reauthenticationRequired`` after the session ended;
    ///   ``CourierError/Code/credentialStoreFailed`` when the store cannot be read; a refresh's error when the
    ///   credential cannot be used without it (it expired, or the server rejected it).
    public func validCredential() async throws -> Credential? {
        guard let credential = try await loadedCredential() else { return try await acquiredCredential() }
        if let unsaved, unsaved.version == credential.version, now() >= unsaved.retryAt {
            await saveAgain(credential)
        }
        do {
            if let flight, flight.version == credential.version {
                return try await wait(for: flight.id)
            }
            // A credential a server rejected is renewed before it signs again (after a rejection that could not be
            // replayed, or a refresh that failed): sent again, it would be rejected again.
            let rejected = rejectedVersion == credential.version
            guard rejected || credential.expires(within: window(for: credential), of: now()) else {
                return credential
            }
            // One the refresher cannot renew (no refresh token) is used until it expires: renewing it early would
            // end the session while its token is still good.
            if !rejected, !refresher.canRenew(credential), !credential.expires(within: .zero, of: now()) {
                return credential
            }
            return try await startRefresh(of: credential)
        } catch  where canFallBack(to: credential, after: error) {
            return credential
        }
    }

    /// How long before its expiry `credential` is renewed: ``refreshWindow``, or half the lifetime of a credential a
    /// refresh gave (or a fleet watcher installed, counted from its arrival) when that is shorter. A provider that issues tokens for 60 s or less would otherwise hand out
    /// each one already inside the window: renewed again on the next call, a refresh per call until the storm
    /// guard stops them (and, for tokens under 30 s, calls failing with `excessiveRefresh` until it lets one through).
    func window(for credential: Credential) -> Duration {
        guard let renewed = renewedLifetime, renewed.version == credential.version else { return refreshWindow }
        // Clamped before the conversion: a token endpoint may announce any lifetime (a finite one past Int64's range
        // in milliseconds would trap).
        let half = min(max(renewed.seconds, 0), 1e9) / 2
        return min(refreshWindow, .milliseconds(Int64(half * 1000)))
    }

    /// Renews the credential after a server rejected the one with `version`, or returns the newer one.
    ///
    /// - When `version` is the current version, a refresh starts, or the one in flight is joined.
    /// - When the current credential is already newer (another request refreshed it), it is returned at once.
    ///
    /// The new credential is saved to the store before this returns. Cancelling the caller ends its wait with
    /// `CancellationError`; the refresh goes on for the others.
    ///
    /// - Parameter version: The ``Credential/version`` that signed the rejected request.
    /// - Returns: A credential newer than `version`.
    /// - Throws: ``CourierError/Code/reauthenticationRequired`` when signed out, after the session ended, or when
    ///   the refresh token is rejected; ``CourierError/Code/excessiveRefresh`` from the storm guard; the
    ///   refresher's error (code kept) for a transient failure.
    public func refresh(rejected version: Int) async throws -> Credential {
        guard let credential = try await loadedCredential() else {
            throw Self.reauthentication("there is no credential to renew; sign in")
        }
        guard version == credential.version else { return credential }
        let earlierRejection = rejectedVersion
        rejectedVersion = version
        if let flight, flight.version == version {
            return try await wait(for: flight.id)
        }
        do {
            return try await startRefresh(of: credential)
        } catch let error as CourierError where error.code == .excessiveRefresh {
            // No refresh started: the credential stays usable for the calls that it does not fail.
            rejectedVersion = earlierRejection
            throw error
        }
    }

    /// Notes that a server rejected the credential with `version`, without renewing it now: for a rejected request
    /// that cannot be replayed. The next ``validCredential()`` renews it first.
    package func noteRejected(version: Int) {
        if case .active(let credential) = session, credential.version == version { rejectedVersion = version }
    }

    /// A first credential from a ``TokenAcquirer`` refresher, in one flight for every caller; `nil` when the
    /// refresher cannot acquire one.
    private func acquiredCredential() async throws -> Credential? {
        guard refresher is any TokenAcquirer else { return nil }
        if let flight, flight.version == nil {
            return try await wait(for: flight.id)
        }
        return try await startRefresh(of: nil)
    }

    /// The current credential, as stored, without renewing it; `nil` when signed out.
    ///
    /// - Throws: ``CourierError/Code/reauthenticationRequired`` after the session ended;
    ///   ``CourierError/Code/credentialStoreFailed`` when the store cannot be read.
    public func currentCredential() async throws -> Credential? {
        try await loadedCredential()
    }

    /// Starts a session with `credential` (after a login), replacing any other, and saves it.
    ///
    /// The credential gets the next ``Credential/version``. A refresh in flight for the previous session ends
    /// with this credential for its waiters.
    ///
    /// - Returns: The credential as installed, with its version.
    /// - Throws: ``CourierError/Code/credentialStoreFailed`` when it cannot be saved; it is in use regardless.
    @discardableResult
    public func signIn(_ credential: Credential) async throws -> Credential {
        let installed = install(credential)
        do {
            try await inStoreOrder { [store, installed] in try await store.save(installed) }
        } catch {
            // The store still holds what was there before (another account's credential, an old session's): a
            // refresh must not take it for another process's renewal of this one.
            storeIsStale = true
            throw error
        }
        storeHolds(installed)
        return installed
    }

    /// Starts a session with `credential` as ``signIn(_:)`` does, without saving it: for a credential the store
    /// already holds, which another process stored (a fleet's watcher).
    ///
    /// - Parameter keepingSignatures: Whether requests signed with earlier credentials stay known, as after a
    ///   refresh: a 401 to one of them is then replayed once with `credential`, without a refresh. A fleet shares
    ///   one account, and its watcher installs what another instance renewed; a sign-in (another account,
    ///   perhaps) forgets them, so such a 401 fails instead. A renewal's lifetime also counts from now, so it is
    ///   renewed at half of what is left of it at the latest, as this instance's own renewals are.
    /// - Returns: The credential as installed, with its version.
    @discardableResult
    package func install(_ credential: Credential, keepingSignatures: Bool = false) -> Credential {
        unsaved = nil
        latestVersion += 1
        var installed = credential
        installed.version = latestVersion
        session = .active(installed)
        rejectedVersion = nil
        if keepingSignatures {
            // Another instance's renewal: its lifetime counts from now, as this one's renewals do (see
            // `window(for:)`). A 30 s token is otherwise "expiring" inside a 60 s window the moment it arrives: renewed
            // at once, and that instance would then renew this one's renewal, for good.
            renewedLifetime = installed.expiresAt.map { (installed.version, $0.timeIntervalSince(now())) }
        } else {
            signatures.removeAll()
        }
        signatures.record(installed)
        eventSink.yield(.signedIn(version: installed.version))
        return installed
    }

    /// Ends the session: forgets the credential, deletes it from the store, and reports
    /// ``AuthenticationEvent/sessionEnded(_:)`` with ``AuthenticationEvent/SessionEndReason/signedOut``.
    ///
    /// Requests then go without a credential (``AuthenticationRequirement/required`` ones fail); a refresh in
    /// flight ends with ``CourierError/Code/reauthenticationRequired`` for its waiters.
    ///
    /// - Throws: ``CourierError/Code/credentialStoreFailed`` when the stored credential cannot be deleted.
    public func signOut() async throws {
        endSignedOutSession()
        try await inStoreOrder { [store] in try await store.clear() }
    }

    /// Ends the session as ``signOut()`` does, without clearing the store: for a store that another process has
    /// signed out (a fleet's watcher). Clearing it again would sign out a session that began there since.
    ///
    /// - Parameters:
    ///   - seen: When given (a watcher), the session ends only if its credential is one of these (the ones the store
    ///     has held): a sign-in whose save has not reached the store yet is newer than the sign-out, and stays. A
    ///     session already over stays as it is, without a second event (this instance's own sign-out, seen again).
    ///   - reason: Why: `.reauthenticationRequired` when another instance's refresh found the grant dead (calls then
    ///     fail with ``CourierError/Code/reauthenticationRequired``, as after this instance's own).
    package func endSignedOutSession(
        ifHoldingOneOf seen: [Credential]? = nil,
        reason: AuthenticationEvent.SessionEndReason = .signedOut
    ) {
        if let seen {
            switch session {
            case .signedOut, .ended: return
            case .active(let current) where !seen.contains(where: { Self.sameTokens($0, current) }): return
            case .active, .unloaded: break
            }
        }
        unsaved = nil
        signOutCount += 1
        session = reason == .reauthenticationRequired ? .ended : .signedOut
        rejectedVersion = nil
        signatures.removeAll()
        eventSink.yield(.sessionEnded(reason))
    }

    /// The credential of the session, reading the store on first use.
    func loadedCredential() async throws -> Credential? {
        if case .unloaded = session {
            let loaded: Credential?
            do {
                loaded = try await inStoreOrder { [store] in try await store.load() }
            } catch  where refresher is any TokenAcquirer {
                // A client-credentials session keeps nothing a person must enter again: a store that cannot be read
                // (a corrupt file) is replaced by the next acquisition's save, rather than failing every call until
                // someone deletes the file. (A user's session fails instead: signing in again replaces it.)
                loaded = nil
            }
            knownStored = loaded
            if case .unloaded = session {
                if let loaded {
                    // Clamped: a custom store may build a credential with any version, and the next one is this + 1.
                    latestVersion = max(latestVersion, min(loaded.version, Credential.maximumVersion))
                    session = .active(loaded)
                    signatures.record(loaded)
                } else {
                    session = .signedOut
                }
            }
        }
        switch session {
        case .active(let credential): return credential
        case .signedOut, .unloaded: return nil
        case .ended: throw Self.reauthentication("the session ended; sign in again")
        }
    }

    /// Whether ``validCredential()`` may use `credential` although renewing it failed with `error`.
    private func canFallBack(to credential: Credential, after error: any Error) -> Bool {
        if error is CancellationError { return false }
        if let error = error as? CourierError, error.code == .reauthenticationRequired { return false }
        guard case .active(let current) = session, current.version == credential.version else { return false }
        return rejectedVersion != credential.version && !credential.expires(within: .zero, of: now())
    }

    static func reauthentication(_ message: String, underlying: (any Error)? = nil) -> CourierError {
        CourierError(code: .reauthenticationRequired, stage: .decide, message: message, underlyingError: underlying)
    }
}
