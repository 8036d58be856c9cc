import CourierCore
import CourierPostgres
import Crypto
import Foundation
import PostgresNIO
import Testing

/// An application role that may not create tables (an admin ran `schema.sql`), and the role's own settings; each
/// test has a database of its own.
@Suite("CourierPostgres under an application role with DML grants only", .timeLimit(.minutes(1)))
struct PostgresRestrictedRoleTests {
    static let credential = Credential(
        accessToken: "access-secret-A", refreshToken: "refresh-secret-R", expiresAt: Date(timeIntervalSince1970: 2e9))

    /// As the owner: the tables (when `migrated`), no `CREATE` on `public` for anyone else, and `database.role`
    /// with `USAGE` on it and DML on its tables.
    static func prepare(_ database: ScratchDatabase, migrated: Bool = true, roleSettings: [String] = []) async throws {
        try await PostgresLab.withClient(configuration: try database.configuration()) { owner in
            if migrated {
                _ = try await PostgresCredentialStore(
                    client: owner, name: PostgresLab.uniqueName(), key: SymmetricKey(size: .bits256)
                ).storedGeneration()
            }
            try await grant(
                database, on: owner,
                including: [
                    "REVOKE CREATE ON SCHEMA public FROM PUBLIC",
                    "CREATE ROLE \(database.role) LOGIN",
                    "GRANT USAGE ON SCHEMA public TO \(database.role)",
                ] + roleSettings)
        }
    }

    /// Runs `statements`, then grants `database.role` DML on every table of `public`.
    static func grant(_ database: ScratchDatabase, on owner: PostgresClient, including statements: [String] = [])
        async throws
    {
        for statement in statements + [
            "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO \(database.role)"
        ] {
            try await owner.query(PostgresQuery(unsafeSQL: statement))
        }
    }

    @Test("a role without CREATE on the schema uses the credential store and the cache store")
    func dmlOnlyRole() async throws {
        try await PostgresLab.withScratchDatabase { database in
            try await Self.prepare(database)
            try await PostgresLab.withClient(configuration: try database.configuration(user: database.role)) { app in
                // The role may indeed not create anything.
                await #expect(throws: PSQLError.self) { try await app.query("CREATE TABLE courier_probe (x int)") }

                let name = PostgresLab.uniqueName()
                let key = SymmetricKey(size: .bits256)
                let store = PostgresCredentialStore(client: app, name: name, key: key)
                try await store.save(Self.credential)
                let other = PostgresCredentialStore(client: app, name: name, key: key)
                let held = try #require(try await other.load())
                #expect(held.accessToken == Self.credential.accessToken)
                _ = try await other.refresher(wrapping: CountingRefresher()).refresh(held)
                #expect(try await store.storedGeneration() == 2)

                let cache = PostgresCacheStore(client: app, namespace: PostgresLab.uniqueName("cache"), key: key)
                let entry = Self.entry()
                try await cache.store(entry)
                #expect(try await cache.entry(for: entry.key)?.body == entry.body)
                #expect(try await cache.usage().count == 1)
            }
        }
    }

    @Test("a cache store whose tables cannot be created fails at once for a while, without migrating per call")
    func failedMigrationRemembered() async throws {
        try await PostgresLab.withScratchDatabase { database in
            try await Self.prepare(database, migrated: false)
            try await PostgresLab.withClient(configuration: try database.configuration(user: database.role)) { app in
                let key = SymmetricKey(size: .bits256)
                let namespace = PostgresLab.uniqueName("cache")
                let cache = PostgresCacheStore(client: app, namespace: namespace, key: key)
                let first = await #expect(throws: CourierError.self) { try await cache.usage() }
                #expect(first?.code == .credentialStoreFailed)
                #expect(first?.message?.contains("creating the CourierPostgres tables") == true)

                // An admin creates the tables and grants the role: a new store works at once…
                try await PostgresLab.withClient(configuration: try database.configuration()) { owner in
                    _ = try await PostgresCredentialStore(
                        client: owner, name: PostgresLab.uniqueName(), key: SymmetricKey(size: .bits256)
                    ).storedGeneration()
                    try await Self.grant(database, on: owner)
                }
                #expect(try await PostgresCacheStore(client: app, namespace: namespace, key: key).usage().count == 0)
                // …while the store that failed does not migrate again on its next calls: it reports the failure.
                for _ in 0..<3 {
                    let again = await #expect(throws: CourierError.self) {
                        _ = try await cache.entry(for: Self.entry().key)
                    }
                    #expect(again?.code == .credentialStoreFailed)
                    #expect(again?.message == first?.message)
                }
            }
        }
    }

    @Test(
        "the role's lock_timeout is back on the pooled connection after a sign-in and after a lock wait that timed out")
    func roleLockTimeoutKept() async throws {
        try await PostgresLab.withScratchDatabase { database in
            try await Self.prepare(database, roleSettings: ["ALTER ROLE \(database.role) SET lock_timeout = '5s'"])
            var configuration = try database.configuration(user: database.role)
            configuration.options.maximumConnections = 1  // every statement below runs on the one connection
            try await PostgresLab.withClient(configuration: configuration) { app in
                #expect(try await Self.lockTimeout(app) == "5s")
                let name = PostgresLab.uniqueName()
                let store = PostgresCredentialStore(
                    client: app, name: name, key: SymmetricKey(size: .bits256), lockTimeout: .milliseconds(200))
                try await store.save(Self.credential)
                #expect(try await Self.lockTimeout(app) == "5s")

                // Another session holds the credential's lock: the sign-in gives up after the store's lockTimeout.
                try await PostgresLab.withClient(configuration: try database.configuration()) { owner in
                    try await PostgresLab.whileHoldingRefreshLock(of: name, on: owner) {
                        let error = await #expect(throws: CourierError.self) {
                            try await store.save(
                                Credential(accessToken: "access-B", expiresAt: Date(timeIntervalSince1970: 2e9)))
                        }
                        #expect(error?.message?.contains("held the refresh lock") == true)
                    }
                }
                #expect(try await Self.lockTimeout(app) == "5s")
            }
        }
    }

    /// `SHOW lock_timeout` on a connection of `client`.
    static func lockTimeout(_ client: PostgresClient) async throws -> String? {
        var value: String?
        for try await shown in try await client.query("SHOW lock_timeout").decode(String.self) { value = shown }
        return value
    }

    /// A small cache entry.
    static func entry() -> CacheEntry {
        CacheEntry(
            key: CacheKey(partition: "", url: "https://api.example.com/items/1"), status: 200,
            headers: [(name: "Cache-Control", value: "max-age=60")], body: Data("{\"id\":1}".utf8),
            requestTime: Date(), responseTime: Date(), vary: [:])
    }
}
