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

@Suite("PostgresCredentialWatcher keeps watching", .timeLimit(.minutes(1)))
struct PostgresCredentialWatcherRecoveryTests {
    static func credential(_ access: String) -> Credential {
        Credential(accessToken: access, refreshToken: "refresh-\(access)", expiresAt: Date(timeIntervalSince1970: 2e9))
    }

    /// Two instances of one credential, signed in with `access-A`: `first` changes it; `second`'s authenticator
    /// (loaded) is the one a watcher keeps up to date, and `watcher` reports `second`'s log.
    struct Instances {
        let name: String
        let key = SymmetricKey(size: .bits256)
        let first: PostgresCredentialStore
        let second: PostgresCredentialStore
        let authenticator: Authenticator
        var watcher = RunningWatcher()

        init(_ client: PostgresClient) async throws {
            name = PostgresLab.uniqueName("watcher")
            first = PostgresCredentialStore(client: client, name: name, key: key)
            second = PostgresCredentialStore(client: client, name: name, key: key, logger: watcher.logger)
            try await first.save(PostgresCredentialWatcherRecoveryTests.credential("access-A"))
            authenticator = Authenticator(store: second, refresher: second.refresher(wrapping: CountingRefresher()))
            #expect(try await authenticator.currentCredential()?.accessToken == "access-A")
        }

        /// Starts the watcher and waits until it listens.
        mutating func startWatching(retryDelay: Duration = .seconds(1)) async {
            watcher.start(
                PostgresCredentialWatcher(store: second, authenticator: authenticator, retryDelay: retryDelay))
            await second.waitUntilListening()
        }
    }

    @Test("a change whose row it could not read (no free connection) is read when it listens again: none is lost")
    func unreadChangeIsReadAgain() async throws {
        try await PostgresLab.withScratchDatabase { database in
            var configuration = try database.configuration()
            configuration.options.maximumConnections = 2  // the watcher's LISTEN, and one more
            try await PostgresLab.withClient(configuration: configuration) { client in
                try await PostgresLab.withClient(configuration: try database.configuration()) { other in
                    let name = PostgresLab.uniqueName("unread")
                    let key = SymmetricKey(size: .bits256)
                    var watcher = RunningWatcher()
                    let first = PostgresCredentialStore(client: other, name: name, key: key)
                    let second = PostgresCredentialStore(
                        client: client, name: name, key: key, connectionTimeout: .milliseconds(300),
                        logger: watcher.logger)
                    try await first.save(Self.credential("access-A"))
                    let authenticator = Authenticator(
                        store: second, refresher: second.refresher(wrapping: CountingRefresher()))
                    #expect(try await authenticator.currentCredential()?.accessToken == "access-A")
                    watcher.start(
                        PostgresCredentialWatcher(
                            store: second, authenticator: authenticator, retryDelay: .milliseconds(10)))
                    await second.waitUntilListening()

                    // The pool's other connection is taken: the watcher's read of the row the notification names
                    // waits for one, and gives up after its 300 ms.
                    let (holding, held) = AsyncStream<Void>.makeStream()
                    let (released, release) = AsyncStream<Void>.makeStream()
                    let holder = Task {
                        try await client.withConnection { _ in
                            held.yield()
                            for await _ in released { break }
                        }
                    }
                    for await _ in holding { break }
                    try await first.save(Self.credential("access-C"))
                    let logged = await watcher.nextLog(containing: "the credential watcher")
                    release.yield()
                    try await holder.value
                    try #require(logged)
                    try #require(await watcher.nextSignIn())
                    #expect(try await authenticator.currentCredential()?.accessToken == "access-C")
                    let error = await watcher.stop()
                    #expect(error == nil, "run() threw \(String(describing: error))")
                }
            }
        }
    }

    @Test("its LISTEN backend terminated: it listens again, installs what was signed in meanwhile, and run() returns")
    func listensAgainAfterTermination() async throws {
        try await PostgresLab.withScratchDatabase { database in
            try await PostgresLab.withClient(configuration: try database.configuration()) { client in
                var fleet = try await Instances(client)
                // Another instance signs in while the watcher is not listening: no notification reaches it.
                await fleet.second.setTestHooks(
                    FleetTestHooks(beforeListeningAgain: { [first = fleet.first] in
                        try? await first.save(Self.credential("access-B"))
                    }))
                await fleet.startWatching(retryDelay: .milliseconds(10))

                let terminated = try await client.query(
                    """
                    SELECT count(pg_terminate_backend(pid))::bigint FROM pg_stat_activity
                    WHERE datname = \(database.name) AND query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()
                    """)
                for try await count in terminated.decode(Int64.self) { #expect(count == 1) }
                try #require(await fleet.watcher.nextLog(containing: "lost its connection"))
                try #require(await fleet.watcher.nextSignIn())
                #expect(try await fleet.authenticator.currentCredential()?.accessToken == "access-B")

                // Listening again: a later sign-in arrives as a notification.
                await fleet.second.setTestHooks(FleetTestHooks())
                await fleet.second.waitUntilListening()
                try await fleet.first.save(Self.credential("access-C"))
                try #require(await fleet.watcher.nextSignIn())
                #expect(try await fleet.authenticator.currentCredential()?.accessToken == "access-C")

                let error = await fleet.watcher.stop()
                #expect(error == nil, "run() threw \(String(describing: error))")
            }
        }
    }

    /// The process of the watcher's `LISTEN` session in `database`.
    static func listeningBackend(of database: ScratchDatabase, on client: PostgresClient) async throws -> pid_t {
        let listening = try await client.query(
            """
            SELECT pid FROM pg_stat_activity
            WHERE datname = \(database.name) AND query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()
            """)
        var pids: [Int32] = []
        for try await pid in listening.decode(Int32.self) { pids.append(pid) }
        return pid_t(try #require(pids.first))
    }

    @Test("its LISTEN connection gone silent (no FIN, no RST): the heartbeat closes it, and it listens again")
    func silentConnectionIsReplaced() async throws {
        try await PostgresLab.withScratchDatabase { database in
            try await PostgresLab.withClient(configuration: try database.configuration()) { client in
                var fleet = try await Instances(client)
                fleet.watcher.start(
                    PostgresCredentialWatcher(
                        store: fleet.second, authenticator: fleet.authenticator, retryDelay: .milliseconds(10),
                        heartbeatInterval: .milliseconds(300)))
                await fleet.second.waitUntilListening()
                let backend = try await Self.listeningBackend(of: database, on: client)
                // The backend stops: its connection stays open and answers nothing, like one a NAT or a load
                // balancer forgot. Before the fix the watcher waited on it forever, reporting itself listening.
                #expect(kill(backend, SIGSTOP) == 0)
                defer { kill(backend, SIGCONT) }
                try await fleet.first.save(Self.credential("access-B"))
                try #require(await fleet.watcher.nextLog(containing: "did not answer its heartbeat"))
                try #require(await fleet.watcher.nextSignIn())
                #expect(try await fleet.authenticator.currentCredential()?.accessToken == "access-B")
                kill(backend, SIGCONT)
                let error = await fleet.watcher.stop()
                #expect(error == nil, "run() threw \(String(describing: error))")
            }
        }
    }

    @Test("stopped while its heartbeat waits on a silent connection, it stops at once")
    func stopDuringHeartbeat() async throws {
        try await PostgresLab.withScratchDatabase { database in
            try await PostgresLab.withClient(configuration: try database.configuration()) { client in
                var fleet = try await Instances(client)
                fleet.watcher.start(
                    PostgresCredentialWatcher(
                        store: fleet.second, authenticator: fleet.authenticator, heartbeatInterval: .seconds(1)))
                await fleet.second.waitUntilListening()
                let backend = try await Self.listeningBackend(of: database, on: client)
                #expect(kill(backend, SIGSTOP) == 0)
                // The backend answers again in 6 s whatever happens, so a watcher that waits for it ends then.
                let resume = Task {
                    try? await Task.sleep(for: .seconds(6))
                    kill(backend, SIGCONT)
                }
                defer { kill(backend, SIGCONT) }
                // The first heartbeat goes out 1 s after listening, and gives up 1 s later: stopped in between (the
                // case under test), before the fix the watcher waited for the SELECT 1 the silent backend never
                // answers, and its shutdown with it.
                try await Task.sleep(for: .milliseconds(1_500))
                let start = ContinuousClock.now
                let error = await fleet.watcher.stop()
                #expect(ContinuousClock.now - start < .seconds(3), "stopped after \(ContinuousClock.now - start)")
                #expect(error == nil, "run() threw \(String(describing: error))")
                resume.cancel()
            }
        }
    }

    @Test("a change it cannot apply (sealed under another key) is skipped, and it goes on listening")
    func applyFailureSkipped() async throws {
        try await PostgresLab.withClient { client in
            var fleet = try await Instances(client)
            await fleet.startWatching()

            // Generation 2 does not open with the fleet's key; generation 3 does.
            try await PostgresCredentialStore(client: client, name: fleet.name, key: SymmetricKey(size: .bits256))
                .save(Self.credential("access-X"))
            try #require(await fleet.watcher.nextLog(containing: "could not apply"))
            try await fleet.first.save(Self.credential("access-C"))
            try #require(await fleet.watcher.nextSignIn())
            #expect(try await fleet.authenticator.currentCredential()?.accessToken == "access-C")
            #expect(try await fleet.second.storedGeneration() == 3)
            // On the connection it started with: the failure did not end the LISTEN.
            #expect(!fleet.watcher.logged.contains { $0.contains("lost its connection") })

            let error = await fleet.watcher.stop()
            #expect(error == nil, "run() threw \(String(describing: error))")
        }
    }
}

/// A watcher running in a task, and what it, its store's logger and its authenticator report, in order.
struct RunningWatcher {
    enum Report: Sendable {
        case event(AuthenticationEvent)
        case logged(String)
        case ended((any Error)?)
        /// A wait's deadline passed.
        case deadline(Int)
    }

    /// A logger for the watched store: its messages are reports too.
    let logger: Logger
    private let sink: AsyncStream<Report>.Continuation
    private var reports: AsyncStream<Report>.Iterator
    private var task: Task<Void, Never>?
    private var forwarding: Task<Void, Never>?
    private var waits = 0
    /// The messages of the store's logger the waits have gone past, in order.
    private(set) var logged: [String] = []

    init() {
        let (stream, sink) = AsyncStream.makeStream(of: Report.self)
        self.sink = sink
        reports = stream.makeAsyncIterator()
        logger = Logger(label: "watcher", factory: { _ in ReportingLogHandler(sink: sink) })
    }

    /// Starts `watcher`.
    mutating func start(_ watcher: PostgresCredentialWatcher) {
        forwarding = Task { [sink] in
            for await event in watcher.authenticator.events { sink.yield(.event(event)) }
        }
        task = Task { [sink] in
            do {
                try await watcher.run()
                sink.yield(.ended(nil))
            } catch {
                sink.yield(.ended(error))
            }
        }
    }

    /// Waits for the authenticator's next sign-in: `false`, with an issue, when the watcher ends first.
    mutating func nextSignIn(sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        await next(sourceLocation: sourceLocation) {
            if case .event(.signedIn) = $0 { return true }
            return false
        }
    }

    /// Waits for a message of the store's logger containing `text`: `false`, with an issue, when the watcher ends
    /// first.
    mutating func nextLog(containing text: String, sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        await next(sourceLocation: sourceLocation) {
            if case .logged(let message) = $0 { return message.contains(text) }
            return false
        }
    }

    /// Waits for a report that `matches`: `false`, with an issue, when the watcher ends first or none comes
    /// within 10 seconds.
    private mutating func next(sourceLocation: SourceLocation, _ matches: (Report) -> Bool) async -> Bool {
        waits += 1
        let wait = waits
        let deadline = Task { [sink] in
            try await Task.sleep(for: .seconds(10))
            sink.yield(.deadline(wait))
        }
        defer { deadline.cancel() }
        while let report = await reports.next() {
            if case .logged(let message) = report { logged.append(message) }
            if matches(report) { return true }
            switch report {
            case .ended(let error):
                Issue.record("the watcher ended: \(String(describing: error))", sourceLocation: sourceLocation)
                return false
            case .deadline(wait):
                Issue.record(
                    "nothing reported within 10 seconds; the watcher logged: \(logged.suffix(10))",
                    sourceLocation: sourceLocation)
                return false
            default:
                continue
            }
        }
        return false
    }

    /// Cancels the watcher and returns what its `run()` threw, if anything.
    mutating func stop() async -> (any Error)? {
        task?.cancel()
        defer { forwarding?.cancel() }
        while let report = await reports.next() {
            if case .ended(let error) = report { return error }
        }
        return nil
    }
}

/// Reports every message as ``RunningWatcher/Report/logged(_:)``.
private struct ReportingLogHandler: LogHandler {
    let sink: AsyncStream<RunningWatcher.Report>.Continuation
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        sink.yield(.logged("\(event.message)"))
    }
}
