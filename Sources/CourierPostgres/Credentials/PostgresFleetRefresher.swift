#if Postgres
    public import CourierCore
    import Foundation
    import PostgresNIO

    /// A `TokenRefresher` that renews a ``PostgresCredentialStore``'s credential once for the whole fleet; made by
    /// `PostgresCredentialStore.refresher(wrapping:)`.
    ///
    /// A refresh, in order:
    /// 1. takes the credential's advisory lock (PostgreSQL queues the other instances: no polling; an instance that
    ///    dies releases it with its connection);
    /// 2. reads the row: when another instance has renewed the credential meanwhile, returns that one without a
    ///    request (the common case for all but one instance of a fleet);
    /// 3. commits a marker saying a refresh of this generation started, then runs the wrapped refresher;
    /// 4. stores the new credential, sealed, as the next generation, clears the marker, `NOTIFY`s
    ///    `courier_credentials`, and releases the lock.
    ///
    /// **Crash safety.** When the marker is found set (an instance died between sending the refresh token and
    /// storing the answer), the refresh token may already be spent. The refresher sends it once more: if the server
    /// never saw it, the fleet recovers; if it did, a rotating server answers `invalid_grant`. An `invalid_grant`
    /// marks the row `ended`, so every instance fails with `CourierError.Code.reauthenticationRequired` at its
    /// next refresh without another token request: one sign-in ends it, never a loop.
    public struct PostgresFleetRefresher: TokenRefresher {
        /// The store whose credential this refresher renews.
        public let store: PostgresCredentialStore
        /// The refresher that talks to the token endpoint.
        public let wrapped: any TokenRefresher

        /// Renews `credential` for the fleet, or returns the credential another instance renewed.
        ///
        /// - Parameter credential: The credential the authenticator holds.
        /// - Returns: A newer credential.
        /// - Throws: `CourierError.Code.reauthenticationRequired` when the fleet is signed out, its session ended,
        ///   or the server rejected the refresh token; `CourierError.Code.credentialStoreFailed` when the database
        ///   cannot be reached or the lock wait times out; the wrapped refresher's error for a transient failure.
        public func refresh(_ credential: Credential) async throws -> Credential {
            try await store.refreshFleetWide(credential, using: wrapped)
        }

        /// The wrapped refresher's answer (see `TokenRefresher.canRenew(_:)`).
        public func canRenew(_ credential: Credential) -> Bool { wrapped.canRenew(credential) }
    }

    /// A `TokenAcquirer` that obtains and renews a ``PostgresCredentialStore``'s credential once for the whole fleet,
    /// for a grant without a user (`OAuth2ClientCredentialsRefresher`); made by
    /// `PostgresCredentialStore.refresher(wrapping:)` from an acquirer.
    ///
    /// Renewing works as ``PostgresFleetRefresher``'s. Acquiring, when the authenticator has no credential (the
    /// store is empty, or the fleet signed out or its session ended), takes the credential's advisory lock, adopts
    /// the credential another instance acquired meanwhile, and otherwise runs the wrapped acquirer and stores its
    /// credential as the next generation: a fleet that starts at once makes one token request. A renewal that finds
    /// the fleet signed out acquires a new credential the same way, instead of asking for a sign-in.
    public struct PostgresFleetAcquirer: TokenAcquirer {
        /// The store whose credential this acquirer obtains and renews.
        public let store: PostgresCredentialStore
        /// The acquirer that talks to the token endpoint.
        public let wrapped: any TokenAcquirer

        /// Renews `credential` for the fleet, or returns the credential another instance renewed or acquired.
        ///
        /// - Parameter credential: The credential the authenticator holds.
        /// - Returns: A newer credential.
        /// - Throws: `CourierError.Code.credentialStoreFailed` when the database cannot be reached or the lock wait
        ///   times out; the wrapped acquirer's error otherwise.
        public func refresh(_ credential: Credential) async throws -> Credential {
            try await store.refreshFleetWide(credential, using: wrapped)
        }

        /// The wrapped refresher's answer (see `TokenRefresher.canRenew(_:)`).
        public func canRenew(_ credential: Credential) -> Bool { wrapped.canRenew(credential) }

        /// The fleet's credential: the one another instance stored, or a new one from the wrapped acquirer, stored.
        ///
        /// - Returns: A credential.
        /// - Throws: `CourierError.Code.credentialStoreFailed` when the database cannot be reached or the lock wait
        ///   times out; the wrapped acquirer's error otherwise.
        public func acquire() async throws -> Credential {
            try await store.acquireFleetWide(using: wrapped)
        }
    }

    /// Points at which the fleet tests stop a refresh or a watcher; empty in production.
    package struct FleetTestHooks: Sendable {
        /// Runs after the marker is committed, before the refresh token is sent.
        package var beforeSending: (@Sendable () async -> Void)?
        /// Runs after the token endpoint answered, before the answer is stored.
        package var afterResponse: (@Sendable () async -> Void)?
        /// Runs when a watcher has read a signed-out row, before it ends the authenticator's session.
        package var beforeApplyingSignOut: (@Sendable () async -> Void)?
        /// Runs when a watcher whose connection failed has waited its backoff, before it connects and listens again.
        package var beforeListeningAgain: (@Sendable () async -> Void)?

        package init(
            beforeSending: (@Sendable () async -> Void)? = nil, afterResponse: (@Sendable () async -> Void)? = nil,
            beforeApplyingSignOut: (@Sendable () async -> Void)? = nil,
            beforeListeningAgain: (@Sendable () async -> Void)? = nil
        ) {
            self.beforeSending = beforeSending
            self.afterResponse = afterResponse
            self.beforeApplyingSignOut = beforeApplyingSignOut
            self.beforeListeningAgain = beforeListeningAgain
        }
    }

    extension PostgresCredentialStore {
        /// See ``PostgresFleetRefresher``.
        func refreshFleetWide(_ credential: Credential, using refresher: any TokenRefresher) async throws -> Credential
        {
            // A clear() after an earlier refresh that ended is no longer the authenticator's answer to it.
            endedRefreshGeneration = nil
            try await migrated()
            do {
                return try await withFleetLock { connection in
                    try await self.refreshLocked(credential, using: refresher, on: connection)
                }
            } catch let failure as TokenEndpointFailure {
                throw failure.error
            } catch {
                throw PostgresFailure.wrap("refreshing the credential \"\(name)\" fleet-wide", error)
            }
        }

        private func refreshLocked(
            _ credential: Credential, using refresher: any TokenRefresher, on connection: PostgresConnection
        ) async throws -> Credential {
            let row = try await readRow(connection)
            if let acquirer = refresher as? any TokenAcquirer, row?.state != "active" {
                do {
                    return try await acquireLocked(using: acquirer, on: connection)
                } catch let error as CourierError where error.code == .reauthenticationRequired {
                    endedRefreshGeneration = row?.generation ?? 0
                    throw error
                }
            }
            let stored: Credential?
            do {
                stored = try row.flatMap { row in try row.sealed.map { try open($0, generation: row.generation) } }
            } catch {
                // A grant without a user replaces a credential it cannot open (see `acquireLocked`).
                guard let acquirer = refresher as? any TokenAcquirer else { throw error }
                return try await acquireLocked(using: acquirer, on: connection)
            }
            // `syncedGeneration` is nil when this instance never read or wrote the row: the credential it holds then
            // came from a sign-in whose save failed (a load, an install or a stored sign-in would have synced), and
            // the row's credential is another session's, perhaps another account's, never its renewal.
            if syncedGeneration.map({ (row?.generation ?? 0) <= $0 }) ?? true,
                stored.map({ !Self.sameTokens($0, credential) }) ?? true, !hasSeen(credential)
            {
                // The row is as this store last synced it, and the credential held is not its, nor one the row held
                // before: a sign-in this instance could not store (the database was down). It is newer than the
                // row: store it, then renew it, instead of handing back the row's older credential (or the sign-out
                // it replaced). A credential the row held before is a refresh that started before this instance's
                // watcher applied the row's newer generation (another instance's renewal or sign-out): storing it
                // would send a spent refresh token, or undo the sign-out.
                let generation = try await saveLocked(credential, on: connection)
                logger.debug(
                    "stored the credential a sign-in could not store", metadata: ["generation": "\(generation)"])
                return try await renewLocked(
                    credential, generation: generation, interrupted: false, using: refresher, on: connection)
            }
            guard let row else {
                endedRefreshGeneration = 0
                noteSynced(0, nil)
                throw reauthentication("there is no credential \"\(name)\" in PostgreSQL; sign in")
            }
            switch row.state {
            case "active": break
            case let state:
                endedRefreshGeneration = row.generation
                noteSynced(row.generation, nil)
                throw reauthentication(
                    state == "ended"
                        ? "the fleet's session for \"\(name)\" ended (the server rejected the refresh token); sign in "
                            + "again"
                        : "the fleet is signed out of \"\(name)\"; sign in")
            }
            guard let stored else { throw PostgresFailure.make("the credential \"\(name)\" has no value") }
            if !Self.sameTokens(stored, credential), !stored.expires(within: .zero, of: Date()) {
                // Another instance renewed it (or signed in) while this one waited: take its credential (unless it
                // has expired since, in a fleet that sat idle: then it is renewed in turn, its refresh token being
                // the live one, rather than handed out to be rejected).
                noteSynced(row.generation, stored)
                expectedEcho = stored
                logger.debug("adopted the fleet's credential", metadata: ["generation": "\(row.generation)"])
                return stored
            }
            return try await renewLocked(
                stored, generation: row.generation, interrupted: row.refreshStartedGeneration == row.generation,
                using: refresher, on: connection)
        }

        /// Under the lock: renews `credential`, the row's at `generation`, with `refresher`, and stores the result
        /// as the next generation. `interrupted`: a refresh of this generation was started before and never stored.
        private func renewLocked(
            _ credential: Credential, generation current: Int64, interrupted: Bool, using refresher: any TokenRefresher,
            on connection: PostgresConnection
        ) async throws -> Credential {
            try await run(
                """
                UPDATE courier_credentials SET refresh_started_generation = \(current),
                    refresh_started_at = now() WHERE name = \(name)
                """, on: connection)
            await testHooks.beforeSending?()
            let renewed: Credential
            do {
                renewed = try await refresher.refresh(credential)
            } catch let error as CourierError where error.code == .reauthenticationRequired {
                do {
                    try await run(
                        """
                        UPDATE courier_credentials SET state = 'ended', sealed = NULL, generation = generation + 1,
                            refresh_started_generation = NULL, updated_at = now() WHERE name = \(name)
                        """, on: connection)
                    try await notify(current + 1, on: connection)
                    noteSynced(current + 1, nil)
                    endedRefreshGeneration = current + 1
                } catch let storeError {
                    // The session ended whether or not the row says so: the caller must hear that (a store failure
                    // in its place kept the dead credential, whose spent refresh token each retry sent again). The
                    // row stays active at `current`; the authenticator's `clear()` that follows signs it out, and
                    // another instance's refresh meanwhile hears `invalid_grant` for itself.
                    logger.error(
                        "the refresh token was rejected, and marking the fleet's session ended failed",
                        metadata: ["error": "\(PostgresFailure.describe(storeError))"])
                    endedRefreshGeneration = current
                }
                let reason =
                    interrupted
                    ? "the server rejected the refresh token; an instance had died after sending it and before "
                        + "storing the answer, so it was already spent"
                    : "the server rejected the refresh token"
                throw reauthentication("\(reason); the fleet's session for \"\(name)\" ended, sign in again", error)
            } catch {
                // Transient: the server answered with an error, or did not answer. Clear the marker so the next
                // refresh is an ordinary one.
                _ = try? await run(
                    "UPDATE courier_credentials SET refresh_started_generation = NULL WHERE name = \(name)",
                    on: connection)
                throw TokenEndpointFailure.passing(error)
            }
            await testHooks.afterResponse?()
            let generation = current + 1
            let sealedRenewed = try seal(renewed, generation: generation)
            do {
                try await run(
                    """
                    UPDATE courier_credentials SET generation = \(generation), state = 'active',
                        sealed = \(sealedRenewed), refresh_started_generation = NULL, updated_at = now()
                    WHERE name = \(name) AND generation = \(current)
                    """, on: connection)
                try await notify(generation, on: connection)
                noteSynced(generation, renewed)
                expectedEcho = renewed
            } catch {
                // The new credential is valid: this instance uses it, and the authenticator's save of it tries the
                // write again. Until then other instances find the marker (see the type's crash-safety note).
                logger.error(
                    "storing a renewed credential failed; this instance keeps it",
                    metadata: ["error": "\(PostgresFailure.describe(error))"])
            }
            logger.debug("renewed the fleet's credential", metadata: ["generation": "\(generation)"])
            return renewed
        }

        /// See ``PostgresFleetAcquirer/acquire()``.
        func acquireFleetWide(using acquirer: any TokenAcquirer) async throws -> Credential {
            try await migrated()
            do {
                return try await withFleetLock { connection in
                    try await self.acquireLocked(using: acquirer, on: connection)
                }
            } catch let failure as TokenEndpointFailure {
                throw failure.error
            } catch {
                throw PostgresFailure.wrap("acquiring the credential \"\(name)\" fleet-wide", error)
            }
        }

        /// Under the lock: the active credential another instance stored while this one waited, or a new one.
        private func acquireLocked(
            using acquirer: any TokenAcquirer, on connection: PostgresConnection
        ) async throws -> Credential {
            if let row = try await readRow(connection), row.state == "active", let sealed = row.sealed {
                do {
                    let stored = try open(sealed, generation: row.generation)
                    noteSynced(row.generation, stored)
                    expectedEcho = stored
                    logger.debug("adopted the fleet's credential", metadata: ["generation": "\(row.generation)"])
                    return stored
                } catch {
                    // Sealed under a key this instance does not have (a key changed outright): a grant without a
                    // user acquires a new credential and replaces it, as the core replaces an unreadable store;
                    // failing, the fleet could not recover without someone deleting the row.
                    logger.warning(
                        "the fleet's credential does not open with the configured key; acquiring a new one",
                        metadata: ["generation": "\(row.generation)"])
                }
            }
            let acquired: Credential
            do {
                acquired = try await acquirer.acquire()
            } catch {
                throw TokenEndpointFailure.passing(error)
            }
            try await saveLocked(acquired, on: connection)
            expectedEcho = acquired
            logger.debug("acquired the fleet's credential")
            return acquired
        }

        /// The wrapped refresher's or acquirer's own error, passed on as it is: not a database failure (a network
        /// error or an app's own error type would otherwise have become `credentialStoreFailed`).
        struct TokenEndpointFailure: Error {
            let error: any Error

            /// `error` marked to pass through, unless it is one that passes anyway (a `CourierError`, whose code the
            /// callers here look at, or a cancellation).
            static func passing(_ error: any Error) -> any Error {
                error is CourierError || error is CancellationError ? error : TokenEndpointFailure(error: error)
            }
        }

        private func reauthentication(_ message: String, _ underlying: (any Error)? = nil) -> CourierError {
            CourierError(
                code: .reauthenticationRequired, stage: .decide, message: message, underlyingError: underlying)
        }
    }
#endif
