import CourierCore
import CourierPostgres
import CourierTestServer
import Crypto
import Foundation
import PostgresNIO
import Testing

/// The fleet test: separate OS processes, one credential in PostgreSQL, a token endpoint that rotates refresh
/// tokens and revokes the family on reuse.
@Suite("Fleet: single-flight refresh across OS processes", .serialized, .timeLimit(.minutes(3)))
struct FleetTests {
    static let workers = 4
    static let callsPerWorker = 250

    /// What one fleet run saw.
    struct Run {
        var results: [WorkerProcess.Result?]
        var counts: RotatingTokenServer.Counts
        var killedAt: Date?
        var rotationTimes: [Date]
        /// The credential a fresh store reads afterwards (`nil`: signed out, or the session ended).
        var stored: Credential?
    }

    /// Starts `workers` processes on one expired credential, lets them go together, and collects their results;
    /// with `stall`, the worker that stalls (`--stall-before-sending` or `--stall-after-response`) is killed with
    /// SIGKILL the moment it says so.
    func runFleet(stall: String? = nil, workers: Int = Self.workers, calls: Int = Self.callsPerWorker) async throws
        -> Run
    {
        let postgresURL = try PostgresLab.url()
        let server = try await TestServer.start()
        defer { Task { try? await server.shutdown() } }
        let tokens = RotatingTokenServer()
        tokens.install(on: server)
        let family = tokens.startFamily()
        let name = PostgresLab.uniqueName("fleet")
        let key = SymmetricKey(size: .bits256)
        let stallFile = FileManager.default.temporaryDirectory.appendingPathComponent("courier-stall-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: stallFile) }

        return try await PostgresLab.withClient { client in
            let store = PostgresCredentialStore(client: client, name: name, key: key)
            try await store.save(
                Credential(
                    accessToken: family.accessToken, refreshToken: family.refreshToken,
                    expiresAt: Date().addingTimeInterval(-60)))
            var arguments = [
                "--server", server.baseURL.absoluteString, "--postgres", postgresURL.absoluteString, "--name", name,
                "--key", key.hex, "--calls", "\(calls)",
            ]
            if let stall { arguments += ["--\(stall)", stallFile] }
            let processes = try (0..<workers).map { _ in try WorkerProcess(arguments: arguments) }
            var iterators = processes.map { $0.lines.makeAsyncIterator() }
            for index in iterators.indices { try await iterators[index].expect("READY") }
            for process in processes { process.go() }
            let killedAt = KilledAt()
            let results = try await withThrowingTaskGroup(of: (Int, WorkerProcess.Result?).self) { group in
                for (index, process) in processes.enumerated() {
                    group.addTask {
                        for await line in process.lines {
                            if line == "STALLED" {
                                process.kill()
                                await killedAt.set(Date())
                            } else if line.hasPrefix("RESULT ") {
                                return (index, try parseResult(line))
                            }
                        }
                        return (index, nil)  // killed
                    }
                }
                var results = [WorkerProcess.Result?](repeating: nil, count: workers)
                for try await (index, result) in group { results[index] = result }
                return results
            }
            return Run(
                results: results, counts: tokens.counts, killedAt: await killedAt.date,
                rotationTimes: tokens.rotationTimes,
                stored: try await PostgresCredentialStore(client: client, name: name, key: key).load())
        }
    }

    actor KilledAt {
        var date: Date?
        func set(_ date: Date) { self.date = date }
    }

    @Test("4 processes × 250 concurrent calls on an expired token → 1 token request, 0 invalid_grant, 0 failures")
    func fleetRefreshesOnce() async throws {
        let run = try await runFleet()
        let results = run.results.compactMap { $0 }
        #expect(results.count == Self.workers)
        #expect(results.reduce(0) { $0 + $1.ok } == Self.workers * Self.callsPerWorker)
        #expect(results.reduce(0) { $0 + $1.failed } == 0)
        #expect(run.counts.tokenRequests == 1)
        #expect(run.counts.invalidGrants == 0)
        #expect(run.counts.reuses == 0)
        #expect(run.stored?.refreshToken != nil)
        // Each worker reads the row and waits on the lock once; none queries per call.
        #expect(results.allSatisfy { $0.statements < 20 })
        print(
            "fleet: \(Self.workers) processes × \(Self.callsPerWorker) calls: "
                + "\(results.reduce(0) { $0 + $1.ok }) ok, \(results.reduce(0) { $0 + $1.failed }) failed, "
                + "\(run.counts.tokenRequests) token request(s), \(run.counts.invalidGrants) invalid_grant, "
                + "\(run.counts.rejectedCalls) rejected calls replayed, statements per worker "
                + "\(results.map(\.statements)), slowest worker \(results.map(\.elapsedMicroseconds).max() ?? 0) µs")
    }

    @Test("the lock holder killed (SIGKILL) before it sends the refresh token → another takes over, no reuse")
    func holderKilledBeforeSending() async throws {
        let run = try await runFleet(stall: "stall-before-sending")
        let survivors = run.results.compactMap { $0 }
        #expect(survivors.count == Self.workers - 1)
        #expect(survivors.reduce(0) { $0 + $1.ok } == (Self.workers - 1) * Self.callsPerWorker)
        #expect(survivors.reduce(0) { $0 + $1.failed } == 0)
        #expect(run.counts.tokenRequests == 1)
        #expect(run.counts.invalidGrants == 0)
        #expect(run.counts.reuses == 0)
        let killedAt = try #require(run.killedAt)
        let recoveredAt = try #require(run.rotationTimes.first)
        let recovery = recoveredAt.timeIntervalSince(killedAt)
        #expect(recovery < 10)
        print(
            "fleet, holder killed before sending: \(survivors.reduce(0) { $0 + $1.ok }) ok, "
                + "\(survivors.reduce(0) { $0 + $1.failed }) failed, \(run.counts.tokenRequests) token request(s), "
                + "\(run.counts.invalidGrants) invalid_grant; new token \(Int(recovery * 1000)) ms after the kill")
    }

    @Test("the holder killed after the token response, before storing it → one invalid_grant ends the session, no loop")
    func holderKilledAfterResponse() async throws {
        let run = try await runFleet(stall: "stall-after-response")
        let survivors = run.results.compactMap { $0 }
        #expect(survivors.count == Self.workers - 1)
        // The answer died with the process: its refresh token was spent. The survivor that takes over sends it once
        // more (the server may never have seen it); the server sees reuse, revokes the family, and the row ends.
        #expect(run.counts.tokenRequests == 2)
        #expect(run.counts.reuses == 1)
        #expect(run.counts.invalidGrants == 1)
        #expect(survivors.reduce(0) { $0 + $1.ok } == 0)
        let errors = survivors.reduce(into: [String: Int]()) { total, result in
            total.merge(result.errors, uniquingKeysWith: +)
        }
        // Every call asks for a sign-in: `reauthenticationRequired` from a refresh that found the session ended, or
        // `missingCredential` in a worker that first loaded the credential after it ended (it finds none).
        #expect(Set(errors.keys).isSubset(of: ["reauthenticationRequired", "missingCredential"]))
        #expect(errors.values.reduce(0, +) == (Self.workers - 1) * Self.callsPerWorker)
        #expect(run.stored == nil)
        print(
            "fleet, holder killed after the response: \(run.counts.tokenRequests) token requests, "
                + "\(run.counts.invalidGrants) invalid_grant, errors \(errors)")
    }
}
