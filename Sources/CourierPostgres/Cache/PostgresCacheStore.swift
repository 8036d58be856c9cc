#if Postgres
    public import CourierCore
    public import Crypto
    import Foundation
    public import Logging
    public import PostgresNIO

    /// A `CacheStore` in PostgreSQL, so every instance of a fleet shares one HTTP cache: what one instance stored,
    /// another serves, and an unsafe method on one invalidates the entry for all.
    ///
    /// ```swift
    /// let cache = HTTPCache(store: PostgresCacheStore(client: postgres, namespace: "github", key: cacheKey))
    /// let client = Client(server: api, transport: transport).configured { $0.cache = cache }
    /// ```
    ///
    /// - **Byte budget.** Entries count their `CacheEntry.cost`; past ``byteLimit`` (per namespace) the least
    ///   recently used are deleted after each store. An entry larger than ``maximumEntrySize`` is not stored.
    /// - **Credential partitions.** Keys keep the cache's partition (an HMAC of the `Authorization` value); the
    ///   partition key is derived from `key`, so every instance computes the same partitions and none holds a
    ///   credential.
    /// - **Sealed.** Responses are sealed with AES-GCM under a subkey of `key`, bound to their namespace, partition
    ///   and URL; URLs are stored only as an HMAC.
    /// - **Failures.** A lookup that fails is a miss and a store that fails is skipped (`CacheStore`'s contract):
    ///   the database being down costs cache hits, never calls.
    ///
    /// Each lookup is one statement (it also marks the entry used), and each store two: the cache is the one part of
    /// CourierPostgres that queries per call, by design, on calls whose responses are cacheable.
    public final class PostgresCacheStore: CacheStore {
        /// Entries of different namespaces never meet: one per upstream API.
        public let namespace: String
        /// The most bytes the namespace's entries may take; least recently used are evicted past it.
        public let byteLimit: Int
        /// Entries larger than this are not stored.
        public let maximumEntrySize: Int
        /// How long a lookup or a store waits for a connection from the client's pool.
        public let connectionTimeout: Duration
        /// The HMAC key of credential partitions, derived from the application's key.
        public let partitionKey: [UInt8]

        private let client: PostgresClient
        private let key: SealingKey
        private let logger: Logger
        private let migration: Migration

        /// Creates a store.
        ///
        /// - Parameters:
        ///   - client: The application's PostgreSQL client; the application runs it.
        ///   - namespace: Which cache this is, the same on every instance that shares it.
        ///   - key: The key entries are sealed with, the same on every instance; never stored.
        ///   - byteLimit: The namespace's byte budget; default 50 MiB.
        ///   - maximumEntrySize: Larger entries are not stored; default 1 MiB.
        ///   - connectionTimeout: The longest a lookup or a store waits for a connection (a lookup past it is a
        ///     miss); default 2 seconds.
        ///   - logger: Where failures are reported, at debug level (they never fail a call).
        public init(
            client: PostgresClient,
            namespace: String,
            key: SymmetricKey,
            byteLimit: Int = 50 << 20,
            maximumEntrySize: Int = 1 << 20,
            connectionTimeout: Duration = .seconds(2),
            logger: Logger = Logger(label: "CourierPostgres", factory: { _ in SwiftLogNoOpLogHandler() })
        ) {
            self.client = client
            self.namespace = namespace
            self.key = SealingKey(key, purpose: "cache")
            self.byteLimit = byteLimit
            self.maximumEntrySize = maximumEntrySize
            self.connectionTimeout = connectionTimeout
            self.partitionKey = self.key.digestKeyBytes
            self.logger = logger
            self.migration = Migration(client: client, timeout: connectionTimeout, logger: logger)
        }

        /// The entry at `key`, marked as used; `nil` when there is none or it does not open.
        ///
        /// - Throws: `CourierError.Code.credentialStoreFailed` when the database cannot be reached.
        public func entry(for key: CacheKey) async throws -> CacheEntry? {
            try await migration.done()
            let digest = self.key.digest(key.url)
            let sealed: Data?
            do {
                let query: PostgresQuery = """
                    UPDATE courier_cache_entries SET last_used = clock_timestamp()
                    WHERE namespace = \(namespace) AND partition = \(key.partition) AND url_digest = \(digest)
                    RETURNING sealed
                    """
                sealed = try await run(query) { rows in
                    var found: Data?
                    for try await value in rows.decode(Data.self) { found = value }
                    return found
                }
            } catch {
                throw PostgresFailure.wrap("reading the shared cache \"\(namespace)\"", error)
            }
            guard let sealed else { return nil }
            guard let plaintext = try? self.key.open(sealed, context: context(key.partition, digest)),
                let entry = CacheEntry(serialized: plaintext), entry.key == key
            else {
                try? await removeEntries(.key(key))
                return nil
            }
            return entry
        }

        /// Stores `entry` for every instance, then evicts least recently used entries past ``byteLimit``.
        ///
        /// - Throws: `CourierError.Code.credentialStoreFailed` when the database cannot be reached.
        public func store(_ entry: CacheEntry) async throws {
            guard entry.cost <= maximumEntrySize, entry.cost <= byteLimit, let plaintext = entry.serialized() else {
                return try await removeEntries(.key(entry.key))
            }
            try await migration.done()
            let digest = key.digest(entry.key.url)
            let sealed = try key.seal(plaintext, context: context(entry.key.partition, digest))
            let cost = entry.cost
            do {
                try await run(
                    """
                    INSERT INTO courier_cache_entries (namespace, partition, url_digest, sealed, cost, last_used)
                    VALUES (\(namespace), \(entry.key.partition), \(digest), \(sealed), \(cost), clock_timestamp())
                    ON CONFLICT (namespace, partition, url_digest) DO UPDATE SET sealed = EXCLUDED.sealed,
                        cost = EXCLUDED.cost, last_used = EXCLUDED.last_used
                    """)
                try await run(
                    """
                    DELETE FROM courier_cache_entries AS e USING (
                        SELECT partition, url_digest FROM (
                            SELECT partition, url_digest,
                                sum(cost) OVER (ORDER BY last_used DESC, url_digest, partition) AS running
                            FROM courier_cache_entries WHERE namespace = \(namespace)
                        ) AS ranked WHERE running > \(byteLimit)
                    ) AS victims
                    WHERE e.namespace = \(namespace) AND e.partition = victims.partition
                        AND e.url_digest = victims.url_digest
                    """)
            } catch {
                throw PostgresFailure.wrap("storing into the shared cache \"\(namespace)\"", error)
            }
        }

        /// Removes the entries `selection` names, for every instance.
        ///
        /// - Throws: `CourierError.Code.credentialStoreFailed` when the database cannot be reached.
        public func removeEntries(_ selection: CacheSelection) async throws {
            try await migration.done()
            let query: PostgresQuery =
                switch selection {
                case .all:
                    "DELETE FROM courier_cache_entries WHERE namespace = \(namespace)"
                case .key(let key):
                    """
                    DELETE FROM courier_cache_entries WHERE namespace = \(namespace)
                        AND partition = \(key.partition) AND url_digest = \(self.key.digest(key.url))
                    """
                case .url(let url):
                    """
                    DELETE FROM courier_cache_entries WHERE namespace = \(namespace)
                        AND url_digest = \(key.digest(url))
                    """
                case .partition(let partition):
                    "DELETE FROM courier_cache_entries WHERE namespace = \(namespace) AND partition = \(partition)"
                case .signedPartitions(let kept):
                    """
                    DELETE FROM courier_cache_entries WHERE namespace = \(namespace) AND partition <> ''
                        AND partition <> \(kept ?? "")
                    """
                }
            do {
                try await run(query)
            } catch {
                throw PostgresFailure.wrap("removing entries from the shared cache \"\(namespace)\"", error)
            }
        }

        /// How many entries the namespace holds and the bytes they take, for every instance.
        ///
        /// - Throws: `CourierError.Code.credentialStoreFailed` when the database cannot be reached.
        public func usage() async throws -> (count: Int, bytes: Int) {
            try await migration.done()
            do {
                let query: PostgresQuery = """
                    SELECT count(*)::bigint, coalesce(sum(cost), 0)::bigint FROM courier_cache_entries
                    WHERE namespace = \(namespace)
                    """
                return try await run(query) { rows in
                    for try await (count, bytes) in rows.decode((Int64, Int64).self) { return (Int(count), Int(bytes)) }
                    return (0, 0)
                }
            } catch {
                throw PostgresFailure.wrap("measuring the shared cache \"\(namespace)\"", error)
            }
        }

        /// Runs `query` on a connection leased within ``connectionTimeout`` and reads its rows with `read`.
        private func run<T: Sendable>(
            _ query: PostgresQuery, read: @escaping @Sendable (PostgresRowSequence) async throws -> T
        ) async throws -> T {
            try await ConnectionLease.with(client, timeout: connectionTimeout) { [logger] connection in
                try await read(try await connection.query(query, logger: logger))
            }
        }

        /// Runs `query`, ignoring any rows.
        private func run(_ query: PostgresQuery) async throws {
            try await run(query) { _ in }
        }

        private func context(_ partition: String, _ digest: String) -> String {
            "\(namespace):\(partition):\(digest)"
        }
    }

    /// Runs ``PostgresSchema/migrate(_:timeout:logger:)`` once per store; a failure is remembered for
    /// `retryDelay`, so a store whose tables cannot be created (a role without `CREATE`, the database down) fails
    /// each call at once instead of repeating the migration per lookup.
    actor Migration {
        private let client: PostgresClient
        private let timeout: Duration
        private let logger: Logger
        private let retryDelay: Duration
        private var task: Task<Void, any Error>?
        /// The last failure, and until when it stands in for another attempt.
        private var failure: (error: any Error, until: ContinuousClock.Instant)?

        init(client: PostgresClient, timeout: Duration, logger: Logger, retryDelay: Duration = .seconds(30)) {
            self.client = client
            self.timeout = timeout
            self.logger = logger
            self.retryDelay = retryDelay
        }

        func done() async throws {
            if let task { return try await task.value }
            if let failure, ContinuousClock.now < failure.until { throw failure.error }
            let task = Task { [client, logger, timeout] in
                do {
                    try await PostgresSchema.migrate(client, timeout: timeout, logger: logger)
                } catch {
                    throw PostgresFailure.wrap("creating the CourierPostgres tables", error)
                }
            }
            self.task = task
            do {
                try await task.value
            } catch {
                self.task = nil
                // A cancellation says nothing about the database: the next call tries again.
                if !(error is CancellationError) { failure = (error, .now + retryDelay) }
                throw error
            }
        }
    }
#endif
