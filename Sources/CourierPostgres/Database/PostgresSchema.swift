#if Postgres
    import Logging
    import PostgresNIO

    /// The tables CourierPostgres keeps, created on first use and versioned.
    ///
    /// `courier_schema` records the version each component's tables are at. Migrations run in one transaction under a
    /// transaction-scoped advisory lock, so eight instances starting at once create the tables once; an instance
    /// that finds a newer version than it knows refuses to touch the tables. The same SQL is in
    /// `Sources/CourierPostgres/Database/schema.sql` for teams that run migrations themselves.
    enum PostgresSchema {
        /// The version this build creates and understands.
        static let version = 1

        /// The advisory lock key the migration holds (an arbitrary constant, the ASCII of "courier" and 1).
        static let migrationLock: Int64 = 0x636F_7572_6965_7201

        /// Version 1: credentials and the shared cache.
        static let statements: [PostgresQuery] = [
            """
            CREATE TABLE IF NOT EXISTS courier_credentials (
                name text PRIMARY KEY,
                generation bigint NOT NULL,
                state text NOT NULL CHECK (state IN ('active', 'signedOut', 'ended')),
                sealed bytea,
                refresh_started_generation bigint,
                refresh_started_at timestamptz,
                updated_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS courier_cache_entries (
                namespace text NOT NULL,
                partition text NOT NULL,
                url_digest text NOT NULL,
                sealed bytea NOT NULL,
                cost integer NOT NULL,
                last_used timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (namespace, partition, url_digest)
            )
            """,
            "CREATE INDEX IF NOT EXISTS courier_cache_entries_lru ON courier_cache_entries (namespace, last_used)",
            "CREATE INDEX IF NOT EXISTS courier_cache_entries_url ON courier_cache_entries (namespace, url_digest)",
        ]

        /// Creates or upgrades the tables, once per database, whatever the number of instances doing it at once.
        ///
        /// The version is read first, without a lock and without DDL: PostgreSQL checks the schema's `CREATE`
        /// privilege even for `CREATE TABLE IF NOT EXISTS` of a table that exists, so an application role with only
        /// DML grants (an admin ran `schema.sql`) could otherwise never start. The lock is taken, and DDL run, only
        /// when the tables are missing or older than this build's.
        ///
        /// - Throws: `CourierError` (`CourierError.Code.credentialStoreFailed`) when the database is unreachable, a statement fails, or the tables are
        ///   at a newer version than this build understands.
        static func migrate(_ client: PostgresClient, timeout: Duration, logger: Logger) async throws {
            try await ConnectionLease.with(client, timeout: timeout) { connection in
                if try await currentVersion(connection, logger: logger) == version { return }
                try await connection.query("BEGIN", logger: logger)
                do {
                    try await connection.query("SELECT pg_advisory_xact_lock(\(migrationLock))", logger: logger)
                    try await connection.query(
                        """
                        CREATE TABLE IF NOT EXISTS courier_schema (
                            component text PRIMARY KEY, version integer NOT NULL)
                        """,
                        logger: logger)
                    if try await currentVersion(connection, logger: logger) < version {
                        for statement in statements { try await connection.query(statement, logger: logger) }
                        try await connection.query(
                            """
                            INSERT INTO courier_schema (component, version) VALUES ('courier', \(version))
                            ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version
                            """,
                            logger: logger)
                    }
                    try await connection.query("COMMIT", logger: logger)
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: logger)
                    throw error
                }
            }
        }

        /// The version the tables are at: 0 when `courier_schema` or its row is missing.
        ///
        /// Reads only (`to_regclass` needs no privilege, the row needs `SELECT`).
        ///
        /// - Throws: When a query fails, or the tables are at a newer version than this build understands.
        private static func currentVersion(_ connection: PostgresConnection, logger: Logger) async throws -> Int {
            var exists = false
            let tables = try await connection.query(
                "SELECT to_regclass('courier_schema') IS NOT NULL", logger: logger)
            for try await found in tables.decode(Bool.self) { exists = found }
            guard exists else { return 0 }
            var current = 0
            let rows = try await connection.query(
                "SELECT version FROM courier_schema WHERE component = 'courier'", logger: logger)
            for try await found in rows.decode(Int.self) { current = found }
            guard current <= version else {
                throw PostgresFailure.make(
                    "the courier tables are at schema version \(current), newer than this build's "
                        + "\(version); upgrade Courier")
            }
            return current
        }
    }
#endif
