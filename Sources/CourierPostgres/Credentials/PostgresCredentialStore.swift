#if Postgres
    public import CourierCore
    public import Crypto
    import Foundation
    public import Logging
    public import PostgresNIO

    /// A `CredentialStore` in PostgreSQL that many server instances share, with a fleet-wide single-flight refresh.
    ///
    /// Give the store to each instance's `Authenticator` together with `refresher(wrapping:)`: the authenticator
    /// keeps single-flighting refreshes inside the process, and the wrapped refresher makes them single-flight across
    /// the fleet. One instance sends the refresh token; the others wait on PostgreSQL's lock and take the credential
    /// it stored, without a request to the token endpoint. A rotated refresh token is therefore never sent twice.
    ///
    /// The access token stays in each process (in the authenticator) until it expires or a server rejects it: the
    /// database is read when an authenticator first loads, and written on refresh, sign-in and sign-out; never per
    /// call.
    ///
    /// Tokens are sealed with AES-GCM under a key the application provides (``init(client:name:key:previousKeys:lockTimeout:connectionTimeout:logger:)``),
    /// bound to the credential's name and generation; the key is never written anywhere. The tables are created on
    /// first use (`Database/schema.sql` has the same SQL, versioned).
    ///
    /// ```swift
    /// let store = PostgresCredentialStore(client: postgres, name: "github", key: credentialKey)
    /// let authenticator = Authenticator(
    ///     store: store,
    ///     refresher: store.refresher(wrapping: OAuth2RefreshTokenRefresher(client: base, path: "/oauth/token",
    ///                                                                     clientID: "fleet"))
    /// )
    /// ```
    ///
    /// The `PostgresClient` is the application's: run it (its `run()`, or a `ServiceGroup`) for as long as the store
    /// is used. When the database is down, calls signed with a valid cached access token go on working; a refresh,
    /// sign-in or sign-out fails with `CourierError.Code.credentialStoreFailed` naming what it was doing, and the
    /// credential is kept, so a later call tries again (bounded by the authenticator's storm guard).
    public actor PostgresCredentialStore: CredentialStore {
        /// The credential's row name: one per upstream account the fleet signs in to.
        public nonisolated let name: String
        /// How long a refresh waits for another instance's refresh before failing with
        /// `CourierError.Code.credentialStoreFailed`. An instance that dies releases the lock at once (its
        /// connection closes); this bounds the wait on one that hangs.
        public nonisolated let lockTimeout: Duration
        /// The size of the application's key, checked before the first operation (see ``minimumKeyBytes``).
        private nonisolated let keyByteCount: Int
        /// How long an operation waits for a connection from the client's pool before failing with
        /// `CourierError.Code.credentialStoreFailed` (the pool itself waits while the database is down).
        public nonisolated let connectionTimeout: Duration

        let client: PostgresClient
        let key: SealingKey
        let logger: Logger
        private var migration: Task<Void, any Error>?
        private var loading: Task<Credential?, any Error>?
        /// The row as this process last read or wrote it, while it is active.
        var synced: (generation: Int64, credential: Credential)?
        /// The row's generation as this process last read or wrote it, in any state (`0`: no row); `nil` before the
        /// first read. A refresh takes the row's credential for another instance's only when the row is newer.
        var syncedGeneration: Int64?
        /// The credentials the row has held as this process read or wrote it (a watcher's included), the latest
        /// last, at most ``seenLimit``: a refresh of one of them is a refresh of an older row, never a sign-in this
        /// process could not store.
        private(set) var seen: [Credential] = []
        private static let seenLimit = 8
        /// The longest credential name, in UTF-8 bytes: its changes' notifications (`name:generation`) stay well
        /// under PostgreSQL's 8,000-byte payload limit.
        static let maxNameLength = 1_000
        /// The credential a fleet refresh or acquisition just handed the authenticator, which saves it next: that
        /// `save` is an echo, not a sign-in, and writes nothing. Consumed by the next `save`.
        var expectedEcho: Credential?
        /// The generation a fleet refresh that ended in `reauthenticationRequired` saw or wrote: the authenticator's
        /// `clear()` that follows signs out only that generation or an older one (never a sign-in stored since).
        /// Consumed by the next `clear()` within ``endedRefreshWindow``, forgotten by a sign-in.
        var endedRefreshGeneration: Int64? {
            didSet { endedRefreshAt = endedRefreshGeneration == nil ? nil : .now }
        }
        /// When ``endedRefreshGeneration`` was set.
        private var endedRefreshAt: ContinuousClock.Instant?
        /// How long after a refresh ended a `clear()` is taken for the authenticator's answer to it, which follows at
        /// once. A later one is a sign-out of its own: after a fleet watcher ended this instance's session (no
        /// `clear()` follows then) and another instance signed in again, an explicit sign-out here matched no row,
        /// reported success, and left the fleet signed in.
        package private(set) var endedRefreshWindow = Duration.seconds(60)

        /// Sets ``endedRefreshWindow`` (tests).
        package func setEndedRefreshWindow(_ window: Duration) {
            endedRefreshWindow = window
        }
        /// Statements sent to the database, for tests and the benchmark (no statement runs per call).
        private(set) var statementCount = 0
        /// Hooks that let the fleet tests stop a refresh at a precise point.
        package var testHooks = FleetTestHooks()
        private var isListening = false
        /// How many times a watcher of this store has started listening (its backoff starts over after one).
        private(set) var listens = 0
        private var listeningWaiters: [CheckedContinuation<Void, Never>] = []
        /// The last signed-out or ended generation a watcher applied (so it signs out once per change).
        var watchedSignOut: Int64?

        /// Creates a store for the credential `name`.
        ///
        /// Nothing is sent to the database until the first ``load()``, ``save(_:)`` or refresh.
        ///
        /// - Parameters:
        ///   - client: The application's PostgreSQL client; the application runs it.
        ///   - name: The credential's name, the same on every instance (the row and the lock are per name); at most
        ///     1,000 bytes of UTF-8 (operations on a longer one fail with `CourierError.Code.credentialStoreFailed`).
        ///   - key: The key tokens are sealed with (AES-GCM, 256-bit recommended); the same on every instance, kept
        ///     out of the database (in the environment or a secret manager). At least 16 bytes: with a shorter one (an
        ///     empty environment variable) every operation fails with `CourierError.Code.credentialStoreFailed`.
        ///   - previousKeys: Keys a stored credential may still be sealed with, during a key rotation: it opens with
        ///     them too (and is sealed with `key` at its next write). Default: none. See <doc:RunningAFleet>.
        ///   - lockTimeout: The longest a refresh waits for another instance's; default 30 seconds, at most
        ///     PostgreSQL's limit (about 24.8 days; a longer one counts as that).
        ///   - connectionTimeout: The longest an operation waits for a database connection; default 10 seconds.
        ///   - logger: Where the store reports refreshes it adopted or performed, at debug level.
        public init(
            client: PostgresClient,
            name: String,
            key: SymmetricKey,
            previousKeys: [SymmetricKey] = [],
            lockTimeout: Duration = .seconds(30),
            connectionTimeout: Duration = .seconds(10),
            logger: Logger = Logger(label: "CourierPostgres", factory: { _ in SwiftLogNoOpLogHandler() })
        ) {
            self.client = client
            self.name = name
            self.key = SealingKey(key, purpose: "credentials", previousKeys: previousKeys)
            self.keyByteCount = key.bitCount / 8
            self.lockTimeout = lockTimeout
            self.connectionTimeout = connectionTimeout
            self.logger = logger
        }

        /// A refresher that runs `refresher` for the whole fleet: at most one instance at a time, and only when no
        /// other instance has already renewed the credential.
        ///
        /// - Parameter refresher: What renews the credential, such as `OAuth2RefreshTokenRefresher`.
        /// - Returns: The refresher to give the `Authenticator` that uses this store.
        public nonisolated func refresher(wrapping refresher: some TokenRefresher) -> PostgresFleetRefresher {
            PostgresFleetRefresher(store: self, wrapped: refresher)
        }

        /// An acquirer that runs `acquirer` for the whole fleet: when no instance holds a credential, one instance
        /// obtains one and the others adopt it; renewals as `refresher(wrapping:)`'s.
        ///
        /// - Parameter acquirer: What obtains the credential, such as `OAuth2ClientCredentialsRefresher`.
        /// - Returns: The refresher to give the `Authenticator` that uses this store.
        public nonisolated func refresher(wrapping acquirer: some TokenAcquirer) -> PostgresFleetAcquirer {
            PostgresFleetAcquirer(store: self, wrapped: acquirer)
        }

        /// The fleet's credential; `nil` when the fleet is signed out or its session ended.
        ///
        /// The first call reads the database, and concurrent calls share that query. Later calls return the
        /// credential this store last read or wrote, without a query (an authenticator loads once per caller that
        /// finds it unloaded, so 250 concurrent first calls would otherwise read the row 250 times); a newer one
        /// written by another instance is adopted at the next refresh, or at once with a
        /// ``PostgresCredentialWatcher``.
        ///
        /// - Throws: `CourierError.Code.credentialStoreFailed` when the database cannot be reached or the sealed
        ///   credential does not open with the key.
        public func load() async throws -> Credential? {
            if let synced { return synced.credential }
            if let loading { return try await loading.value }
            let task = Task { try await self.readCredential() }
            loading = task
            defer { loading = nil }
            return try await task.value
        }

        /// Stores `credential` for the fleet (a sign-in): a new generation, sealed, under the fleet's lock.
        ///
        /// The authenticator also calls this after every refresh; when the credential is the one the fleet refresh
        /// just stored or adopted, nothing is written. Any other save writes, even of the tokens this store last
        /// read (the fleet may have signed out since).
        ///
        /// - Throws: `CourierError.Code.credentialStoreFailed` when it cannot be written.
        public func save(_ credential: Credential) async throws {
            let echo = expectedEcho
            expectedEcho = nil
            if let echo, Self.sameTokens(echo, credential) { return }
            try await migrated()
            do {
                _ = try await withFleetLock { connection in try await self.saveLocked(credential, on: connection) }
            } catch {
                throw PostgresFailure.wrap("saving the credential \"\(name)\" to PostgreSQL", error)
            }
        }

        /// Signs the whole fleet out: the sealed credential is deleted and every instance's next refresh fails with
        /// `CourierError.Code.reauthenticationRequired`. Succeeds when already signed out, or when a refresh has
        /// already ended the session.
        ///
        /// After a fleet refresh of this store failed with `CourierError.Code.reauthenticationRequired` (the
        /// authenticator then ends its session and calls this), the next call within a minute signs out only the
        /// generation that refresh saw: a sign-in another instance stored since stays. A later call (an explicit
        /// sign-out) signs out whatever is signed in.
        ///
        /// - Throws: `CourierError.Code.credentialStoreFailed` when the database cannot be reached.
        public func clear() async throws {
            let recent = endedRefreshAt.map { ContinuousClock.now - $0 <= endedRefreshWindow } ?? false
            let through = recent ? endedRefreshGeneration : nil
            endedRefreshGeneration = nil
            try await migrated()
            do {
                try await withFleetLock { connection in try await self.clearLocked(through: through, on: connection) }
            } catch {
                throw PostgresFailure.wrap("signing the credential \"\(name)\" out in PostgreSQL", error)
            }
        }

        /// The credential's generation in the database (it grows with every sign-in, refresh and sign-out); `nil`
        /// when there is no row. For diagnostics and tests.
        ///
        /// - Throws: `CourierError.Code.credentialStoreFailed` when the database cannot be reached.
        public func storedGeneration() async throws -> Int64? {
            try await migrated()
            do {
                return try await ConnectionLease.with(client, timeout: connectionTimeout) { connection in
                    try await self.readRow(connection)?.generation
                }
            } catch {
                throw PostgresFailure.wrap("reading the credential \"\(name)\" from PostgreSQL", error)
            }
        }

        /// How many statements this store has sent (tests and benchmarks check that none runs per call).
        public var statementsSent: Int { statementCount }

        /// Installs hooks that stop a refresh at a precise point (the fleet tests' kill -9).
        package func setTestHooks(_ hooks: FleetTestHooks) { testHooks = hooks }

        /// Returns once a ``PostgresCredentialWatcher`` of this store is listening (tests start changes after it).
        package func waitUntilListening() async {
            if isListening { return }
            await withCheckedContinuation { listeningWaiters.append($0) }
        }

        /// A watcher's `LISTEN` is in place.
        func noteListening() {
            isListening = true
            listens += 1
            for waiter in listeningWaiters { waiter.resume() }
            listeningWaiters.removeAll()
        }

        /// A watcher's connection failed; ``waitUntilListening()`` waits for it to listen again.
        func noteNotListening() {
            isListening = false
        }

        // MARK: - Internals shared with the refresher

        /// The credential's row.
        struct Row {
            var generation: Int64
            var state: String
            var sealed: Data?
            var refreshStartedGeneration: Int64?
        }

        /// Creates the tables once per process (and once per database: see ``PostgresSchema``).
        func migrated() async throws {
            guard keyByteCount >= Self.minimumKeyBytes else {
                // An empty key (a missing environment variable) derives the same subkeys in every process, and
                // anyone's: "sealed" tokens that anyone who reads the table can open.
                throw PostgresFailure.make(
                    "the sealing key has \(keyByteCount) bytes; use a random key of at least \(Self.minimumKeyBytes) "
                        + "(SymmetricKey(size: .bits256))")
            }
            guard name.utf8.count <= Self.maxNameLength else {
                // Each change is announced as `name:generation` with NOTIFY, whose payload PostgreSQL limits to
                // 8,000 bytes: a longer name wrote its row, then failed the NOTIFY, and the save threw although the
                // row had changed.
                throw PostgresFailure.make(
                    "the credential name is \(name.utf8.count) bytes long; at most \(Self.maxNameLength) fit a "
                        + "PostgreSQL notification")
            }
            if let migration { return try await migration.value }
            let task = Task { [client, logger, connectionTimeout] in
                try await PostgresSchema.migrate(client, timeout: connectionTimeout, logger: logger)
            }
            migration = task
            do {
                try await task.value
            } catch {
                migration = nil
                throw PostgresFailure.wrap("creating the CourierPostgres tables", error)
            }
        }

        private func readCredential() async throws -> Credential? {
            try await migrated()
            do {
                return try await ConnectionLease.with(client, timeout: connectionTimeout) { connection in
                    try await self.readCredential(on: connection)
                }
            } catch {
                throw PostgresFailure.wrap("reading the credential \"\(name)\" from PostgreSQL", error)
            }
        }

        private func readCredential(on connection: PostgresConnection) async throws -> Credential? {
            let row = try await readRow(connection)
            guard let row, row.state == "active", let sealed = row.sealed else {
                noteSynced(row?.generation ?? 0, nil)
                return nil
            }
            let credential = try open(sealed, generation: row.generation)
            noteSynced(row.generation, credential)
            return credential
        }

        /// Remembers the row as this process read or wrote it: at `generation`, holding `credential` (`nil`: not
        /// active).
        func noteSynced(_ generation: Int64, _ credential: Credential?) {
            synced = credential.map { (generation, $0) }
            syncedGeneration = generation
            if let credential, !hasSeen(credential) {
                if seen.count == Self.seenLimit { seen.removeFirst() }
                seen.append(credential)
            }
        }

        /// Whether the row held `credential` when this process read or wrote it.
        func hasSeen(_ credential: Credential) -> Bool {
            seen.contains { Self.sameTokens($0, credential) }
        }

        /// A sign-in: the next generation, sealed, under the lock; returns that generation.
        @discardableResult
        func saveLocked(_ credential: Credential, on connection: PostgresConnection) async throws -> Int64 {
            let current = try await readRow(connection)
            let generation = (current?.generation ?? 0) + 1
            let sealed = try seal(credential, generation: generation)
            try await run(
                """
                INSERT INTO courier_credentials (name, generation, state, sealed)
                VALUES (\(name), \(generation), 'active', \(sealed))
                ON CONFLICT (name) DO UPDATE SET generation = EXCLUDED.generation, state = 'active',
                    sealed = EXCLUDED.sealed, refresh_started_generation = NULL, refresh_started_at = NULL,
                    updated_at = now()
                """, on: connection)
            try await notify(generation, on: connection)
            noteSynced(generation, credential)
            endedRefreshGeneration = nil
            return generation
        }

        /// A sign-out, under the lock, of the active row, or only of an active row at `through` or older; notifies
        /// only when it changed the row.
        private func clearLocked(through: Int64?, on connection: PostgresConnection) async throws {
            let rows = try await run(
                """
                UPDATE courier_credentials SET state = 'signedOut', sealed = NULL,
                    generation = generation + 1, refresh_started_generation = NULL, updated_at = now()
                WHERE name = \(name) AND state = 'active' AND generation <= \(through ?? Int64.max)
                RETURNING generation
                """, on: connection)
            var changed: Int64?
            for try await generation in rows.decode(Int64.self) { changed = generation }
            if let changed {
                try await notify(changed, on: connection)
                noteSynced(changed, nil)
            } else {
                // Already signed out or ended, or signed in since the refresh that ended: the row as it is.
                let row = try await readRow(connection)
                if let row, row.state == "active", through != nil {
                    logger.debug(
                        "kept the credential signed in since the refresh that ended",
                        metadata: ["generation": "\(row.generation)"])
                }
                synced = nil
                syncedGeneration = row?.generation ?? 0
            }
        }

        func readRow(_ connection: PostgresConnection) async throws -> Row? {
            let rows = try await run(
                """
                SELECT generation, state, sealed, refresh_started_generation FROM courier_credentials
                WHERE name = \(name)
                """, on: connection)
            for try await (generation, state, sealed, started) in rows.decode((Int64, String, Data?, Int64?).self) {
                return Row(generation: generation, state: state, sealed: sealed, refreshStartedGeneration: started)
            }
            return nil
        }

        /// Runs `body` holding the credential's session-level advisory lock on one connection.
        ///
        /// Session-level, not transaction-scoped: a refresh commits a marker before it sends the refresh token, and
        /// the lock must outlive that commit. PostgreSQL releases it when the connection closes, so an instance
        /// killed mid-refresh frees it at once. Waiting for it is PostgreSQL's own lock queue: no polling.
        func withFleetLock<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T)
            async throws -> T
        {
            try await ConnectionLease.with(client, timeout: connectionTimeout) { connection in
                try await self.lock(connection)
                let result: Result<T, any Error>
                do {
                    result = .success(try await body(connection))
                } catch {
                    result = .failure(error)
                }
                await self.unlockOrClose(connection)
                return try result.get()
            }
        }

        /// Releases the lock; when that fails, closes the connection instead (PostgreSQL then releases every lock
        /// of the session), so a pooled connection never goes back to the pool holding the fleet's lock, which would
        /// stall every other instance until its ``lockTimeout``.
        private func unlockOrClose(_ connection: PostgresConnection) async {
            do {
                try await unlock(connection)
            } catch {
                logger.error(
                    "releasing the refresh lock failed; closing its connection",
                    metadata: ["error": "\(PostgresFailure.describe(error))"])
                try? await connection.close()
            }
        }

        private func lock(_ connection: PostgresConnection) async throws {
            try await run(
                PostgresQuery(unsafeSQL: "SET lock_timeout = \(Self.milliseconds(lockTimeout))"), on: connection)
            do {
                try await runReading(
                    "SELECT pg_advisory_lock(hashtextextended('courier.credential:' || \(name), 0))", on: connection)
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "55P03" {
                // The wait timed out: the lock was not granted. The pooled connection goes back with its own
                // lock_timeout (the role's or database's, if set).
                _ = try? await run("RESET lock_timeout", on: connection)
                throw PostgresFailure.make(
                    "another instance has held the refresh lock of the credential \"\(name)\" for more than "
                        + "\(lockTimeout)")
            } catch {
                // Cancelled, or the connection failed, while waiting: PostgreSQL still waits for the lock (the client
                // sends no cancel request) and grants it later to this session. Back in the pool, the connection
                // held the fleet's lock, and every instance's refresh timed out until it closed. Closed, its session
                // ends and the lock with it.
                try? await connection.close()
                throw error
            }
        }

        private func unlock(_ connection: PostgresConnection) async throws {
            try await runReading(
                "SELECT pg_advisory_unlock(hashtextextended('courier.credential:' || \(name), 0))", on: connection)
            try await run("RESET lock_timeout", on: connection)
        }

        /// Tells every listening instance that the credential is at `generation`.
        func notify(_ generation: Int64, on connection: PostgresConnection) async throws {
            try await runReading(
                "SELECT pg_notify('courier_credentials', \(name) || ':' || \(generation))", on: connection)
        }

        /// Runs a `SELECT` whose rows are not needed, reading them to the end: PostgresNIO hands back the rows
        /// before the statement has run, and reports a failure while it runs (a lock timeout) only through them.
        func runReading(_ query: PostgresQuery, on connection: PostgresConnection) async throws {
            for try await _ in try await run(query, on: connection) {}
        }

        @discardableResult
        func run(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> PostgresRowSequence {
            statementCount += 1
            return try await connection.query(query, logger: logger)
        }

        func seal(_ credential: Credential, generation: Int64) throws -> Data {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .secondsSince1970
            return try key.seal(try encoder.encode(credential), context: "\(name):\(generation)")
        }

        func open(_ sealed: Data, generation: Int64) throws -> Credential {
            let plaintext = try key.open(sealed, context: "\(name):\(generation)")
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            do {
                return try decoder.decode(Credential.self, from: plaintext)
            } catch {
                throw PostgresFailure.make("the credential \"\(name)\" opened but is not a credential")
            }
        }

        static func sameTokens(_ a: Credential, _ b: Credential) -> Bool {
            a.accessToken == b.accessToken && a.refreshToken == b.refreshToken && a.tokenType == b.tokenType
                && a.expiresAt?.timeIntervalSince1970.rounded() == b.expiresAt?.timeIntervalSince1970.rounded()
        }

        /// The shortest sealing key accepted, in bytes.
        static let minimumKeyBytes = 16

        /// `duration` in whole milliseconds for `SET lock_timeout`: at least 1, at most PostgreSQL's largest
        /// (`INT_MAX` ms, about 24.8 days; a longer one failed every operation), without overflow (`.seconds(.max)`
        /// trapped).
        static func milliseconds(_ duration: Duration) -> Int64 {
            let parts = duration.components
            guard parts.seconds < Int64(Int32.max) / 1000 else { return Int64(Int32.max) }
            return min(Int64(Int32.max), max(1, parts.seconds * 1000 + parts.attoseconds / 1_000_000_000_000_000))
        }
    }
#endif
