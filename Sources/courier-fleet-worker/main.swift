// One instance of a fleet, as a separate OS process, for the CourierPostgres fleet tests and the courier-fleet
// benchmark: it signs its calls with a PostgresCredentialStore's credential, makes many concurrent calls to a
// protected resource, and prints one machine-readable result line.
//
// Usage: courier-fleet-worker --server URL --postgres URL --name NAME --key HEX --calls N
//            [--stall-before-sending FILE | --stall-after-response FILE]
//
// Protocol on stdout: `READY` once connected (it then waits for a line `GO` on stdin, so every worker of a fleet
// starts together); `STALLED` when a stall flag fired (the test then kills it with SIGKILL); finally
// `RESULT {"ok":…,"failed":…,"errors":{…},"statements":…,"elapsedMicroseconds":…}`. A stall flag fires in the one
// worker that creates FILE first (O_EXCL), so a fleet stalls exactly once.
#if Postgres
    import Courier
    import CourierCore
    import CourierPostgres
    import Crypto
    import Foundation
    import Logging
    import PostgresNIO

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Darwin)
        import Darwin
    #endif

    struct Options {
        var server: URL
        var postgres: URL
        var name: String
        var key: SymmetricKey
        var calls: Int
        var stallBeforeSending: String?
        var stallAfterResponse: String?

        static func parse(_ arguments: [String]) throws -> Options {
            let known: Set = [
                "server", "postgres", "name", "key", "calls", "stall-before-sending", "stall-after-response",
            ]
            var values: [String: String] = [:]
            var index = 0
            while index < arguments.count {
                let flag = arguments[index]
                // Not echoed: out of order, it may be a value (the PostgreSQL URL and its password, the key).
                guard flag.hasPrefix("--"), index + 1 < arguments.count else {
                    throw WorkerError("expected --flag value at argument \(index + 1)")
                }
                // A misspelt flag is an error, not a stall that silently never fires.
                guard known.contains(String(flag.dropFirst(2))) else {
                    let names = known.sorted().joined(separator: ", ")
                    throw WorkerError("unknown flag at argument \(index + 1) (known: \(names))")
                }
                values[String(flag.dropFirst(2))] = arguments[index + 1]
                index += 2
            }
            func required(_ name: String) throws -> String {
                guard let value = values[name] else { throw WorkerError("missing --\(name)") }
                return value
            }
            guard let server = URL(string: try required("server")), let postgres = URL(string: try required("postgres"))
            else { throw WorkerError("--server and --postgres must be URLs") }
            guard let calls = Int(try required("calls")), calls > 0 else {
                throw WorkerError("--calls must be positive")
            }
            let hex = Array(try required("key").utf8)
            guard hex.allSatisfy({ Character(Unicode.Scalar($0)).isHexDigit }) else {
                throw WorkerError("--key must be 64 hex digits")
            }
            var bytes: [UInt8] = []
            for offset in stride(from: 0, to: hex.count, by: 2) where offset + 1 < hex.count {
                guard let byte = UInt8(String(decoding: hex[offset...offset + 1], as: UTF8.self), radix: 16) else {
                    throw WorkerError("--key must be 64 hex digits")
                }
                bytes.append(byte)
            }
            guard hex.count == 64, bytes.count == 32 else { throw WorkerError("--key must be 64 hex digits") }
            return Options(
                server: server, postgres: postgres, name: try required("name"), key: SymmetricKey(data: bytes),
                calls: calls, stallBeforeSending: values["stall-before-sending"],
                stallAfterResponse: values["stall-after-response"])
        }
    }

    struct WorkerError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The protected resource of `RotatingTokenServer`.
    struct GetResource: Request {
        typealias Response = Data
        var path: String { "/fleet/resource" }
        var authentication: AuthenticationRequirement { .required }
    }

    /// Writes `line` to stdout at once (the test reads it while this process runs).
    func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// A hook that stalls forever in the one worker that creates `path` first.
    func stall(once path: String?) -> (@Sendable () async -> Void)? {
        guard let path else { return nil }
        return {
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            guard descriptor >= 0 else { return }
            close(descriptor)
            say("STALLED")
            // The test kills this process now; waiting is the point, not synchronisation.
            while true { try? await Task.sleep(for: .seconds(3600)) }
        }
    }

    func postgresConfiguration(_ url: URL) throws -> PostgresClient.Configuration {
        guard let host = url.host, let user = url.user else { throw WorkerError("--postgres needs a host and a user") }
        let database = url.path.split(separator: "/").first.map(String.init)
        var configuration = PostgresClient.Configuration(
            host: host, port: url.port ?? 5432, username: user, password: url.password, database: database,
            tls: .disable)
        configuration.options.maximumConnections = 4
        return configuration
    }

    func runWorker(_ options: Options) async throws {
        let postgres = PostgresClient(configuration: try postgresConfiguration(options.postgres))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await postgres.run() }
            let store = PostgresCredentialStore(client: postgres, name: options.name, key: options.key)
            await store.setTestHooks(
                FleetTestHooks(
                    beforeSending: stall(once: options.stallBeforeSending),
                    afterResponse: stall(once: options.stallAfterResponse)))
            let base = Client(baseURL: options.server)
            let authenticator = Authenticator(
                store: store,
                refresher: store.refresher(
                    wrapping: OAuth2RefreshTokenRefresher(client: base, path: "/oauth/token", clientID: "fleet")))
            let client = base.configured { $0.authenticate(with: authenticator) }
            _ = try await store.storedGeneration()  // connected, tables there
            say("READY")
            guard readLine() == "GO" else { throw WorkerError("expected GO on stdin") }
            let start = ContinuousClock.now
            var ok = 0
            var errors: [String: Int] = [:]
            await withTaskGroup(of: String?.self) { calls in
                for _ in 0..<options.calls {
                    calls.addTask {
                        do {
                            _ = try await client.send(GetResource())
                            return nil
                        } catch let error as CourierError {
                            return "\(error.code)"
                        } catch {
                            return "\(type(of: error))"
                        }
                    }
                }
                for await outcome in calls {
                    if let outcome { errors[outcome, default: 0] += 1 } else { ok += 1 }
                }
            }
            let elapsed = ContinuousClock.now - start
            let micros = elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000
            let errorJSON = errors.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",")
            let statements = await store.statementsSent
            say(
                #"RESULT {"ok":\#(ok),"failed":\#(options.calls - ok),"errors":{\#(errorJSON)},"#
                    + #""statements":\#(statements),"elapsedMicroseconds":\#(micros)}"#)
            group.cancelAll()
        }
    }

    do {
        try await runWorker(try Options.parse(Array(CommandLine.arguments.dropFirst())))
    } catch {
        FileHandle.standardError.write(Data("courier-fleet-worker: \(error)\n".utf8))
        exit(1)
    }
#else
    print("courier-fleet-worker: built without the Postgres trait")
#endif
