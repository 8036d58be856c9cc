// courier-fleet (issue #20): what CourierPostgres costs.
//
// 1. Per-call overhead with a valid token: the same client on a mock transport, signed by an Authenticator whose
//    store is PostgresCredentialStore, then InMemoryCredentialStore, alternating rounds in one run. No statement
//    runs per call, so the difference should be noise (goal: within 2 µs).
// 2. Refresh storm: every call starts on an expired token against the embedded server's RotatingTokenServer; the
//    time until the last call is answered, for one process (1,000 calls, in-memory store) and for a fleet of
//    processes (this executable re-run as workers, PostgreSQL store), and the token requests each needed.
//
// Usage: courier-fleet --postgres postgres://user@127.0.0.1:PORT/db [--calls 2000] [--rounds 101] [--workers 4]
//            [--storm 1000]
//        (scripts/postgres-lab prints a URL; COURIER_POSTGRES_URL is used when --postgres is absent)
// By hand, from the repository's root:
//   scripts/postgres-lab > /tmp/pg.env &   # then, once /tmp/pg.env has its line:
//   . /tmp/pg.env && swift build -c release --package-path Benchmarks --product courier-fleet \
//       && Benchmarks/.build/release/courier-fleet
import Courier
import CourierCore
import CourierPostgres
import CourierTestServer
import CourierTesting
import Crypto
import Foundation
import PostgresNIO

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct Ping: Request {
    typealias Response = Data
    var path: String { "/ping" }
    var authentication: AuthenticationRequirement { .required }
}

struct GetResource: Request {
    typealias Response = Data
    var path: String { "/fleet/resource" }
    var authentication: AuthenticationRequirement { .required }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
}

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: "--\(name)"), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func postgresConfiguration(_ text: String) throws -> PostgresClient.Configuration {
    guard let url = URL(string: text), let host = url.host, let user = url.user else {
        throw BenchError(description: "--postgres must be postgres://user@host:port/database")
    }
    return PostgresClient.Configuration(
        host: host, port: url.port ?? 5432, username: user, password: url.password,
        database: url.path.split(separator: "/").first.map(String.init), tls: .disable)
}

func microseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
}

func format(_ value: Double) -> String { String(format: "%.2f", value) }

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

func hex(_ key: SymmetricKey) -> String { key.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() } }

func keyFromHex(_ text: String) throws -> SymmetricKey {
    let digits = Array(text.utf8)
    var bytes: [UInt8] = []
    for offset in stride(from: 0, to: digits.count - 1, by: 2) {
        guard let byte = UInt8(String(decoding: digits[offset...offset + 1], as: UTF8.self), radix: 16) else {
            throw BenchError(description: "bad key")
        }
        bytes.append(byte)
    }
    guard bytes.count == 32 else { throw BenchError(description: "bad key") }
    return SymmetricKey(data: bytes)
}

/// Runs `body` with a running PostgresClient.
func withPostgres<T: Sendable>(
    _ configuration: PostgresClient.Configuration, _ body: (PostgresClient) async throws -> T
)
    async throws -> T
{
    let client = PostgresClient(configuration: configuration)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await client.run() }
        defer { group.cancelAll() }
        return try await body(client)
    }
}

// MARK: - 1. Per-call overhead

func perCallOverhead(postgres: PostgresClient, calls: Int, rounds: Int) async throws {
    let credential = Credential(
        accessToken: "bench-access", refreshToken: "bench-refresh", expiresAt: Date().addingTimeInterval(86_400))
    let transport = MockTransport()
    transport.stub(.get, "/ping") { _ in .data(Data("{}".utf8)) }
    let server = Server(baseURL: URL(string: "https://api.example.com")!)
    func client(_ store: any CredentialStore, refresher: any TokenRefresher) async throws -> Client {
        let authenticator = Authenticator(store: store, refresher: refresher)
        let client = Client(server: server, transport: transport).configured { $0.authenticate(with: authenticator) }
        _ = try await client.send(Ping())  // loads the credential once
        return client
    }
    let pgStore = PostgresCredentialStore(
        client: postgres, name: "bench-\(UUID().uuidString)", key: SymmetricKey(size: .bits256))
    try await pgStore.save(credential)
    let unused = OAuth2RefreshTokenRefresher(
        client: Client(server: server, transport: transport), path: "/t", clientID: "b")
    let postgresClient = try await client(pgStore, refresher: pgStore.refresher(wrapping: unused))
    let memoryClient = try await client(InMemoryCredentialStore(credential), refresher: unused)
    let statementsBefore = await pgStore.statementsSent

    func measure(_ client: Client) async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<calls { _ = try await client.send(Ping()) }
        return microseconds(clock.now - start) / Double(calls)
    }
    _ = try await measure(memoryClient)  // warm-up
    _ = try await measure(postgresClient)
    var memory: [Double] = []
    var shared: [Double] = []
    var differences: [Double] = []
    for round in 0..<rounds {
        // Alternate which goes first, so drift does not favour one.
        let (m, p): (Double, Double)
        if round % 2 == 0 {
            m = try await measure(memoryClient)
            p = try await measure(postgresClient)
        } else {
            p = try await measure(postgresClient)
            m = try await measure(memoryClient)
        }
        memory.append(m)
        shared.append(p)
        differences.append(p - m)
    }
    let statements = await pgStore.statementsSent - statementsBefore
    print("## Per-call overhead, valid token, mock transport (\(calls) sequential calls × \(rounds) rounds)")
    print("")
    print("| Store | µs per call: median | 25th–75th percentile |")
    print("|---|---|---|")
    for (label, values) in [("InMemoryCredentialStore", memory), ("PostgresCredentialStore", shared)] {
        let sorted = values.sorted()
        let quartiles = "\(format(sorted[sorted.count / 4]))–\(format(sorted[sorted.count * 3 / 4]))"
        print("| \(label) | \(format(median(values))) | \(quartiles) |")
    }
    print("")
    print(
        "Difference (Postgres − memory, median of \(rounds) paired rounds): \(String(format: "%+.3f", median(differences))) "
            + "µs per call; "
            + "statements sent during the measured calls: \(statements)")
    print("")
}

// MARK: - 2. Refresh storm

/// One process: `calls` concurrent calls on an expired token, in-memory store.
func stormOneProcess(calls: Int) async throws -> (milliseconds: Double, tokenRequests: Int, failed: Int) {
    let server = try await TestServer.start()
    defer { Task { try? await server.shutdown() } }
    let tokens = RotatingTokenServer()
    tokens.install(on: server)
    let family = tokens.startFamily()
    let base = Client(baseURL: server.baseURL)
    let authenticator = Authenticator(
        store: InMemoryCredentialStore(
            Credential(
                accessToken: family.accessToken, refreshToken: family.refreshToken,
                expiresAt: Date().addingTimeInterval(-60))),
        refresher: OAuth2RefreshTokenRefresher(client: base, path: "/oauth/token", clientID: "bench"))
    let client = base.configured { $0.authenticate(with: authenticator) }
    let clock = ContinuousClock()
    let start = clock.now
    let failed = await withTaskGroup(of: Bool.self) { group in
        for _ in 0..<calls { group.addTask { (try? await client.send(GetResource())) == nil } }
        return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
    }
    let elapsed = microseconds(clock.now - start) / 1000
    return (elapsed, tokens.counts.tokenRequests, failed)
}

/// A fleet: `workers` copies of this executable, `calls` each, PostgreSQL store.
func stormFleet(postgres: PostgresClient, url: String, workers: Int, calls: Int) async throws
    -> (milliseconds: Double, tokenRequests: Int, failed: Int)
{
    let server = try await TestServer.start()
    defer { Task { try? await server.shutdown() } }
    let tokens = RotatingTokenServer()
    tokens.install(on: server)
    let family = tokens.startFamily()
    let name = "bench-storm-\(UUID().uuidString)"
    let key = SymmetricKey(size: .bits256)
    try await PostgresCredentialStore(client: postgres, name: name, key: key).save(
        Credential(
            accessToken: family.accessToken, refreshToken: family.refreshToken,
            expiresAt: Date().addingTimeInterval(-60)))
    var processes: [(Process, FileHandle, FileHandle)] = []
    for _ in 0..<workers {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = [
            "--worker", "--server", server.baseURL.absoluteString, "--postgres", url, "--name", name, "--key", hex(key),
            "--calls", "\(calls)",
        ]
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        processes.append((process, output.fileHandleForReading, input.fileHandleForWriting))
    }
    func readLine(_ handle: FileHandle) -> String {
        var line = Data()
        while true {
            let byte = handle.readData(ofLength: 1)
            if byte.isEmpty || byte.first == UInt8(ascii: "\n") { break }
            line.append(byte)
        }
        return String(decoding: line, as: UTF8.self)
    }
    for (_, output, _) in processes where readLine(output) != "READY" {
        throw BenchError(description: "a worker did not start")
    }
    let clock = ContinuousClock()
    let start = clock.now
    for (_, _, input) in processes { input.write(Data("GO\n".utf8)) }
    var failed = 0
    for (process, output, _) in processes {
        let line = readLine(output)
        failed += Int(line.split(separator: " ").last ?? "") ?? calls
        process.waitUntilExit()
    }
    let elapsed = microseconds(clock.now - start) / 1000
    return (elapsed, tokens.counts.tokenRequests, failed)
}

/// Worker mode (`--worker`): one fleet instance; prints READY, waits for GO, prints `DONE <failed>`.
func worker() async throws {
    guard let server = option("server").flatMap(URL.init(string:)), let url = option("postgres"),
        let name = option("name"), let key = option("key"), let calls = option("calls").flatMap(Int.init)
    else { throw BenchError(description: "worker: missing arguments") }
    var configuration = try postgresConfiguration(url)
    configuration.options.maximumConnections = 4
    try await withPostgres(configuration) { postgres in
        let store = PostgresCredentialStore(client: postgres, name: name, key: try keyFromHex(key))
        let base = Client(baseURL: server)
        let authenticator = Authenticator(
            store: store,
            refresher: store.refresher(
                wrapping: OAuth2RefreshTokenRefresher(client: base, path: "/oauth/token", clientID: "bench")))
        let client = base.configured { $0.authenticate(with: authenticator) }
        _ = try await store.storedGeneration()
        FileHandle.standardOutput.write(Data("READY\n".utf8))
        guard Swift.readLine() == "GO" else { throw BenchError(description: "worker: expected GO") }
        let failed = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<calls { group.addTask { (try? await client.send(GetResource())) == nil } }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        FileHandle.standardOutput.write(Data("DONE \(failed)\n".utf8))
    }
}

func main() async throws {
    if CommandLine.arguments.contains("--worker") { return try await worker() }
    guard let url = option("postgres") ?? ProcessInfo.processInfo.environment["COURIER_POSTGRES_URL"] else {
        throw BenchError(description: "pass --postgres URL or set COURIER_POSTGRES_URL (scripts/postgres-lab)")
    }
    let calls = option("calls").flatMap(Int.init) ?? 2000
    let rounds = option("rounds").flatMap(Int.init) ?? 101
    let workers = option("workers").flatMap(Int.init) ?? 4
    let storm = option("storm").flatMap(Int.init) ?? 1000
    try await withPostgres(try postgresConfiguration(url)) { postgres in
        try await perCallOverhead(postgres: postgres, calls: calls, rounds: rounds)
        print("## Refresh storm: \(storm) concurrent calls on an expired token, rotating refresh tokens")
        print("")
        print("| Setup | time to the last answer (ms, median of 3) | token requests | failed calls |")
        print("|---|---|---|---|")
        var one: [(Double, Int, Int)] = []
        var fleet: [(Double, Int, Int)] = []
        for _ in 0..<3 {
            one.append(try await stormOneProcess(calls: storm))
            fleet.append(try await stormFleet(postgres: postgres, url: url, workers: workers, calls: storm / workers))
        }
        func row(_ label: String, _ runs: [(Double, Int, Int)]) {
            let times = runs.map(\.0)
            print(
                "| \(label) | \(String(format: "%.1f", median(times))) (\(times.map { String(format: "%.1f", $0) }.joined(separator: ", "))) "
                    + "| \(runs.map { String($0.1) }.joined(separator: ", ")) | \(runs.map { String($0.2) }.joined(separator: ", ")) |"
            )
        }
        row("1 process, in-memory store", one)
        row("\(workers) processes × \(storm / workers), PostgresCredentialStore", fleet)
        print("")
    }
}

do {
    try await main()
} catch {
    FileHandle.standardError.write(Data("courier-fleet: \(error)\n".utf8))
    exit(1)
}
