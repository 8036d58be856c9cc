#if Postgres
    public import CourierCore
    import Logging
    import PostgresNIO
    public import ServiceLifecycle

    /// Keeps an instance's `Authenticator` up to date with the fleet's credential, as it changes elsewhere: a
    /// ServiceLifecycle `Service` that `LISTEN`s on `courier_credentials`.
    ///
    /// Without it an instance learns of a new credential at its next refresh (its token expires, or a server rejects
    /// it), and then takes it from the database without a token request. With it, an instance that is not refreshing
    /// installs a credential another instance renewed or signed in with as soon as PostgreSQL delivers the
    /// notification (as `Authenticator.signIn(_:)` does: it numbers it and purges the previous credential's cache
    /// partition), and ends its session when the fleet signs out (`sessionEnded(.signedOut)`) or its session ended
    /// because the server rejected the refresh token (`sessionEnded(.reauthenticationRequired)`, and calls fail with
    /// `CourierError.Code.reauthenticationRequired`, as on the instance that refreshed). A sign-in this instance
    /// made after the watcher read the row stays. Neither writes the row back: a sign-out's write could undo a sign-in stored since. Nothing polls: the
    /// notification carries the new generation, and the row is read once per change (and once each time the watcher
    /// starts listening).
    ///
    /// ```swift
    /// let watcher = PostgresCredentialWatcher(store: store, authenticator: authenticator)
    /// let group = ServiceGroup(services: [postgres, watcher, app], logger: logger)
    /// ```
    ///
    /// It holds one connection of the client's pool while it runs, and keeps running until graceful shutdown or
    /// cancellation: when its connection fails (the database restarts, an administrator terminates its backend, the
    /// network drops) it logs a warning, waits (``retryDelay``, doubling up to ``maximumRetryDelay``), connects and
    /// listens again, then reads the row once, so a change made while it was not listening is applied too. A change
    /// whose row it cannot read (no connection for the read within the store's `connectionTimeout`, a connection that
    /// fails) is read the same way: it listens again and catches up, so no change is lost. A row that does not open
    /// with the key is logged and skipped, and it goes on listening. A `ServiceGroup` is therefore never shut down by
    /// it: the store's own calls report the database being down. A connection that goes silent without failing (a
    /// NAT or load balancer that forgot it, a failover whose old host answers nothing) is found by a heartbeat: a
    /// `SELECT 1` every ``heartbeatInterval`` that does not answer within as long closes it, and the watcher listens
    /// again on a new one.
    public struct PostgresCredentialWatcher: Service {
        /// The store whose credential is watched.
        public let store: PostgresCredentialStore
        /// The authenticator kept up to date.
        public let authenticator: Authenticator
        /// How long the watcher waits before its first attempt to listen again after its connection failed.
        public let retryDelay: Duration
        /// The longest wait between attempts: each failed attempt doubles the wait up to this.
        public let maximumRetryDelay: Duration
        /// How often the listening connection is checked, and how long its check may take before it is closed.
        public let heartbeatInterval: Duration

        /// Creates a watcher; nothing happens until ``run()``.
        ///
        /// - Parameters:
        ///   - store: The store the authenticator uses.
        ///   - authenticator: The instance's authenticator.
        ///   - retryDelay: The wait before listening again after the connection failed; default 1 second.
        ///   - maximumRetryDelay: The longest wait between attempts; default 30 seconds.
        ///   - heartbeatInterval: How often the listening connection is checked with a `SELECT 1`, and how long the
        ///     check may take before the connection is taken for dead; default 30 seconds.
        public init(
            store: PostgresCredentialStore,
            authenticator: Authenticator,
            retryDelay: Duration = .seconds(1),
            maximumRetryDelay: Duration = .seconds(30),
            heartbeatInterval: Duration = .seconds(30)
        ) {
            self.store = store
            self.authenticator = authenticator
            self.retryDelay = retryDelay
            self.maximumRetryDelay = max(retryDelay, maximumRetryDelay)
            self.heartbeatInterval = max(.milliseconds(10), heartbeatInterval)
        }

        /// Listens until graceful shutdown or cancellation, reconnecting whenever the connection fails.
        ///
        /// Returns on graceful shutdown, cancellation, or when the client's pool has shut down; it does not throw
        /// (connection and database failures are logged and retried).
        public func run() async throws {
            await cancelWhenGracefulShutdown {
                [store, authenticator, retryDelay, maximumRetryDelay, heartbeatInterval] in
                await store.watch(
                    updating: authenticator, retryDelay: retryDelay, maximumRetryDelay: maximumRetryDelay,
                    heartbeatInterval: heartbeatInterval)
            }
        }
    }

    /// A row the watcher read but could not open with the key: reading it again would not help.
    private struct UnopenedRow: Error {
        let error: any Error
    }

    extension PostgresCredentialStore {
        /// Listens on `courier_credentials` (on a connection of its own) and applies this credential's changes to
        /// `authenticator`, listening again after a failure, until cancelled or the client's pool shuts down.
        func watch(
            updating authenticator: Authenticator, retryDelay: Duration, maximumRetryDelay: Duration,
            heartbeatInterval: Duration
        ) async {
            var delay = retryDelay
            while !Task.isCancelled {
                let listensBefore = listens
                do {
                    try await listenOnce(updating: authenticator, heartbeatInterval: heartbeatInterval)
                    logger.warning("the credential watcher's notifications ended; listening again")
                } catch is CancellationError {
                    return
                } catch {
                    if Task.isCancelled { return }
                    logger.warning(
                        "the credential watcher lost its connection; listening again",
                        metadata: [
                            "credential": "\(name)", "retryDelay": "\(delay)",
                            "error": "\(PostgresFailure.describe(error))",
                        ])
                }
                noteNotListening()
                // A connection that listened before failing starts the backoff over.
                if listens > listensBefore { delay = retryDelay }
                do {
                    try await Task.sleep(for: delay)
                } catch {
                    return
                }
                delay = min(delay * 2, maximumRetryDelay)
                await testHooks.beforeListeningAgain?()
            }
        }

        /// One `LISTEN` on one connection: catches up with the row once listening, then applies each notification.
        ///
        /// - Throws: `CancellationError` when cancelled or the pool closed; the failure otherwise.
        private func listenOnce(updating authenticator: Authenticator, heartbeatInterval: Duration) async throws {
            do {
                try await migrated()
                try await ConnectionLease.with(client, timeout: connectionTimeout) { connection in
                    try await connection.listen(on: "courier_credentials") { notifications in
                        await self.noteListening()
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            group.addTask { [logger = self.logger] in
                                await Self.heartbeat(connection, every: heartbeatInterval, logger: logger)
                            }
                            defer { group.cancelAll() }
                            // Changes made while nothing listened (before the start, or while reconnecting).
                            try await self.applyLogging(nil, to: authenticator)
                            for try await notification in notifications {
                                guard let separator = notification.payload.lastIndex(of: ":"),
                                    notification.payload[..<separator] == self.name,
                                    let generation = Int64(notification.payload[separator...].dropFirst())
                                else { continue }
                                try await self.applyLogging(generation, to: authenticator)
                            }
                        }
                    }
                }
            } catch let error as PSQLError where error.code == .queryCancelled || error.code == .poolClosed {
                throw CancellationError()
            }
        }

        /// Checks `connection` every `interval` with a `SELECT 1`; closes it when the check fails or takes longer than
        /// `interval` (the notifications then fail, and the watcher listens again), and returns. A connection the
        /// network lost without a word (no FIN, no RST) otherwise delivered nothing, forever, while the watcher
        /// reported itself listening. Returns when cancelled, too.
        private static func heartbeat(_ connection: PostgresConnection, every interval: Duration, logger: Logger) async
        {
            while true {
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return
                }
                enum Check { case answered, silent, cancelled }
                let check = await withTaskGroup(of: Check.self) { checks in
                    checks.addTask {
                        do {
                            for try await _ in try await connection.query("SELECT 1", logger: logger) {}
                            return .answered
                        } catch {
                            return .silent
                        }
                    }
                    checks.addTask {
                        do {
                            try await Task.sleep(for: interval)
                            return .silent
                        } catch {
                            // Cancelled: after the check answered (the result is not looked at), or with the watcher.
                            return .cancelled
                        }
                    }
                    let first = await checks.next() ?? .cancelled
                    // A check that waits on a silent connection ends only when it closes (PostgresNIO's query does
                    // not stop when its task is cancelled): closing it lets the group end, also when the watcher
                    // is cancelled meanwhile (its shutdown waited for the check before).
                    if first != .answered {
                        if first == .silent {
                            logger.warning(
                                "the credential watcher's connection did not answer its heartbeat; closing it",
                                metadata: ["heartbeatInterval": "\(interval)"])
                        }
                        try? await connection.close()
                    }
                    checks.cancelAll()
                    return first
                }
                if check != .answered || Task.isCancelled { return }
            }
        }

        /// ``apply(_:to:)``, logging a row that does not open instead of throwing: the watcher goes on listening.
        ///
        /// - Throws: The failure to read the row (no connection, a connection that failed): the watcher listens
        ///   again and reads the row then, instead of dropping the change.
        private func applyLogging(_ generation: Int64?, to authenticator: Authenticator) async throws {
            do {
                try await apply(generation, to: authenticator)
            } catch let failure as UnopenedRow {
                let error = failure.error
                if Task.isCancelled { return }
                logger.warning(
                    "the credential watcher could not apply a change of the credential",
                    metadata: [
                        "credential": "\(name)", "generation": "\(generation.map(String.init) ?? "current")",
                        "error": "\(PostgresFailure.describe(error))",
                    ])
            }
        }

        /// Installs generation `generation` (or the sign-out it is) in `authenticator`, unless this process already
        /// has it; with `nil`, whatever generation the row is at (a watcher that starts listening catches up).
        func apply(_ generation: Int64?, to authenticator: Authenticator) async throws {
            if let generation, let synced, synced.generation >= generation { return }
            let row = try await ConnectionLease.with(client, timeout: connectionTimeout) { connection in
                try await self.readRow(connection)
            }
            guard let row, row.generation >= generation ?? 0 else { return }
            // The authenticator takes the row's state without writing it back: the store already holds it, and a
            // write could undo a change another instance made since the row was read (a sign-out's `clear()` would
            // sign out a sign-in stored meanwhile).
            guard row.state == "active", let sealed = row.sealed else {
                if let watchedSignOut, watchedSignOut >= row.generation { return }
                // Catching up: a process that holds none of the store's credentials has no session to end.
                if generation == nil, synced == nil { return }
                watchedSignOut = row.generation
                noteSynced(row.generation, nil)
                await testHooks.beforeApplyingSignOut?()
                // A sign-in through this store since the row was read (its save landed meanwhile): it stands.
                if let synced, synced.generation > row.generation { return }
                // Nor does a sign-in whose save is still on its way end: the authenticator holds a credential this
                // store has not seen.
                await authenticator.endSignedOutSession(
                    ifHoldingOneOf: seen, reason: row.state == "ended" ? .reauthenticationRequired : .signedOut)
                return
            }
            let credential: Credential
            do {
                credential = try open(sealed, generation: row.generation)
            } catch {
                throw UnopenedRow(error: error)
            }
            if let synced, synced.generation >= row.generation { return }
            noteSynced(row.generation, credential)
            // Requests in flight with the credential it replaces are replayed with it on a 401, as after a
            // refresh of this instance's own (the fleet's instances share one account).
            await authenticator.install(credential, keepingSignatures: true)
            logger.debug("installed the fleet's credential", metadata: ["generation": "\(row.generation)"])
        }
    }
#endif
