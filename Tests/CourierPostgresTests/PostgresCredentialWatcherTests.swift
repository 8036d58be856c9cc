import CourierCore
import CourierPostgres
import Crypto
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Testing

@Suite("PostgresCredentialWatcher in a ServiceGroup", .timeLimit(.minutes(1)))
struct PostgresCredentialWatcherTests {
    @Test("graceful shutdown stops the watcher and the PostgresClient; the store then fails typed, without hanging")
    func gracefulShutdown() async throws {
        let postgres = PostgresClient(configuration: try PostgresLab.configuration(PostgresLab.url()))
        let key = SymmetricKey(size: .bits256)
        let name = PostgresLab.uniqueName("lifecycle")
        let store = PostgresCredentialStore(client: postgres, name: name, key: key, connectionTimeout: .seconds(2))
        let authenticator = Authenticator(store: store, refresher: store.refresher(wrapping: CountingRefresher()))
        let group = ServiceGroup(
            services: [postgres, PostgresCredentialWatcher(store: store, authenticator: authenticator)],
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        let running = Task { try await group.run() }
        await store.waitUntilListening()
        // The watcher is listening on a connection of the running client: the store works.
        try await store.save(
            Credential(accessToken: "access-A", refreshToken: "refresh-R", expiresAt: Date().addingTimeInterval(600)))
        #expect(try await store.storedGeneration() == 1)

        await group.triggerGracefulShutdown()
        try await running.value  // returns: the watcher left its LISTEN, then the client's pool closed

        let error = await #expect(throws: CourierError.self) { try await store.storedGeneration() }
        #expect(error?.code == .credentialStoreFailed)
    }
}
