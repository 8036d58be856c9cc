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
    /// partition), and ends its session when the fleet signs out or its session ended (as `Authenticator.signOut()`
    /// does). Neither writes the row back: a sign-out's write could undo a sign-in stored since. Nothing polls: the
    /// notification carries the new generation, and the row is read once per change.
    ///
    /// ```swift
    /// let watcher = PostgresCredentialWatcher(store: store, authenticator: authenticator)
    /// let group = ServiceGroup(services: [postgres, watcher, app], logger: logger)
    /// ```
    ///
    /// It holds one connection of the client's pool while it runs. ``run()`` returns on graceful shutdown or
    /// cancellation; it throws when the connection fails (run it again, or let the service group restart it).
    public struct PostgresCredentialWatcher: Service {
        /// The store whose credential is watched.
        public let store: PostgresCredentialStore
        /// The authenticator kept up to date.
        public let authenticator: Authenticator

        /// Creates a watcher; nothing happens until ``run()``.
        ///
        /// - Parameters:
        ///   - store: The store the authenticator uses.
        ///   - authenticator: The instance's authenticator.
        public init(store: PostgresCredentialStore, authenticator: Authenticator) {
            self.store = store
            self.authenticator = authenticator
        }

        /// Listens until graceful shutdown or cancellation.
        ///
        /// - Throws: `CourierError.Code.credentialStoreFailed` when the connection cannot be made or fails.
        public func run() async throws {
            do {
                try await cancelWhenGracefulShutdown {
                    try await store.watch(updating: authenticator)
                }
            } catch is CancellationError {
                return
            }
        }
    }

    extension PostgresCredentialStore {
        /// Listens on `courier_credentials` (on a connection of its own) and applies this credential's changes to `authenticator`.
        func watch(updating authenticator: Authenticator) async throws {
            try await migrated()
            do {
                try await ConnectionLease.with(client, timeout: connectionTimeout) { connection in
                    try await connection.listen(on: "courier_credentials") { notifications in
                        await self.noteListening()
                        for try await notification in notifications {
                            guard let separator = notification.payload.lastIndex(of: ":"),
                                notification.payload[..<separator] == self.name,
                                let generation = Int64(notification.payload[separator...].dropFirst())
                            else { continue }
                            try await self.apply(generation, to: authenticator)
                        }
                    }
                }
            } catch let error as PSQLError where error.code == .queryCancelled || error.code == .poolClosed {
                throw CancellationError()
            } catch {
                if Task.isCancelled { throw CancellationError() }
                throw PostgresFailure.wrap("listening for changes of the credential \"\(name)\"", error)
            }
        }

        /// Installs generation `generation` (or the sign-out it is) in `authenticator`, unless this process already
        /// has it.
        func apply(_ generation: Int64, to authenticator: Authenticator) async throws {
            if let synced, synced.generation >= generation { return }
            let row = try await ConnectionLease.with(client, timeout: connectionTimeout) { connection in
                try await self.readRow(connection)
            }
            guard let row, row.generation >= generation else { return }
            // The authenticator takes the row's state without writing it back: the store already holds it, and a
            // write could undo a change another instance made since the row was read (a sign-out's `clear()` would
            // sign out a sign-in stored meanwhile).
            guard row.state == "active", let sealed = row.sealed else {
                if let watchedSignOut, watchedSignOut >= row.generation { return }
                watchedSignOut = row.generation
                synced = nil
                await testHooks.beforeApplyingSignOut?()
                await authenticator.endSignedOutSession()
                return
            }
            let credential = try open(sealed, generation: row.generation)
            if let synced, synced.generation >= row.generation { return }
            synced = (row.generation, credential)
            // Requests in flight with the credential it replaces are replayed with it on a 401, as after a
            // refresh of this instance's own (the fleet's instances share one account).
            await authenticator.install(credential, keepingSignatures: true)
            logger.debug("installed the fleet's credential", metadata: ["generation": "\(row.generation)"])
        }
    }
#endif
