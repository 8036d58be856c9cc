import CourierCore
import CourierPostgres
import Crypto
import Foundation
import Logging
import PostgresNIO
import Testing

/// The PostgreSQL lab `scripts/postgres-lab` starts (`COURIER_POSTGRES_URL`).
enum PostgresLab {
    /// The lab's URL; skips the test visibly without one, or fails it under `scripts/test` (`COURIER_REQUIRE_LABS=1`).
    static func url(sourceLocation: SourceLocation = #_sourceLocation) throws -> URL {
        if let text = ProcessInfo.processInfo.environment["COURIER_POSTGRES_URL"], let url = URL(string: text) {
            return url
        }
        let reason = "COURIER_POSTGRES_URL is not set (start scripts/postgres-lab)"
        if ProcessInfo.processInfo.environment["COURIER_REQUIRE_LABS"] == "1" {
            Issue.record("\(reason), but scripts/test should have started it", sourceLocation: sourceLocation)
            throw LabMissing(reason: reason)
        }
        print("CourierPostgres: skipped \"\(Test.current?.name ?? "a test")\": \(reason)")
        try Test.cancel(Comment(rawValue: reason), sourceLocation: sourceLocation)
    }

    /// A client configuration for `url` (`postgres://user@host:port/database`).
    static func configuration(_ url: URL) throws -> PostgresClient.Configuration {
        let host = try #require(url.host)
        let user = try #require(url.user)
        return PostgresClient.Configuration(
            host: host, port: url.port ?? 5432, username: user, password: url.password,
            database: url.path.split(separator: "/").first.map(String.init), tls: .disable)
    }

    /// Runs `body` with a running client for the lab, shutting it down afterwards whatever happens.
    static func withClient<T: Sendable>(
        configuration: PostgresClient.Configuration? = nil,
        _ body: @Sendable (PostgresClient) async throws -> T
    ) async throws -> T {
        let client = PostgresClient(configuration: try configuration ?? Self.configuration(url()))
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }

    /// Runs `body` with a database of its own on the lab, dropped afterwards (with the role ``ScratchDatabase/role``,
    /// when `body` created it): for tests that change a database's or a role's settings or privileges, or terminate
    /// backends, without touching the tests that share the lab's database.
    static func withScratchDatabase<T: Sendable>(_ body: @Sendable (ScratchDatabase) async throws -> T) async throws
        -> T
    {
        let lab = try url()
        let name = "courier_" + UUID().uuidString.lowercased().filter { $0 != "-" }
        let database = ScratchDatabase(lab: lab, name: name, role: name + "_app")
        try await withClient { admin in
            _ = try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
        }
        let result: Result<T, any Error>
        do {
            result = .success(try await body(database))
        } catch {
            result = .failure(error)
        }
        // A task of its own: a test cancelled (past its time limit) still drops what it created.
        try await Task {
            try await withClient { admin in
                try await admin.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"))
                try await admin.query(PostgresQuery(unsafeSQL: "DROP ROLE IF EXISTS \(database.role)"))
            }
        }.value
        return try result.get()
    }

    /// Runs `body` while a session of `client` holds the refresh lock of the credential `name`, as an instance
    /// that hangs in the middle of a refresh would.
    static func whileHoldingRefreshLock<T: Sendable>(
        of name: String, on client: PostgresClient, _ body: () async throws -> T
    ) async throws -> T {
        try await client.withConnection { holder in
            let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
            let lock: PostgresQuery = "SELECT pg_advisory_lock(hashtextextended('courier.credential:' || \(name), 0))"
            for try await _ in try await holder.query(lock, logger: logger) {}
            let result: Result<T, any Error>
            do {
                result = .success(try await body())
            } catch {
                result = .failure(error)
            }
            for try await _ in try await holder.query("SELECT pg_advisory_unlock_all()", logger: logger) {}
            return try result.get()
        }
    }

    /// A fresh credential name, so tests never share a row.
    static func uniqueName(_ prefix: String = "test") -> String {
        "\(prefix)-\(UUID().uuidString.lowercased())"
    }
}

/// A database of one test's own (``PostgresLab/withScratchDatabase(_:)``).
struct ScratchDatabase: Sendable {
    /// The lab's URL (its user is a superuser).
    let lab: URL
    /// The database's name, a plain identifier.
    let name: String
    /// A role name for the test to create (dropped afterwards), a plain identifier.
    let role: String

    /// A client configuration for the database, as the lab's superuser or as `user` (the lab trusts every role).
    func configuration(user: String? = nil) throws -> PostgresClient.Configuration {
        var configuration = try PostgresLab.configuration(lab)
        configuration.database = name
        if let user { configuration.username = user }
        return configuration
    }
}

/// A lab that `scripts/test` should have started is missing.
struct LabMissing: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}

extension SymmetricKey {
    /// The key as 64 hex digits, for the worker's `--key`.
    var hex: String { withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() } }
}
