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

    /// A fresh credential name, so tests never share a row.
    static func uniqueName(_ prefix: String = "test") -> String {
        "\(prefix)-\(UUID().uuidString.lowercased())"
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
