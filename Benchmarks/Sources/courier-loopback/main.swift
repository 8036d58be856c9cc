// Loopback throughput and latency: Courier against the raw transports it drives, side by side, as ratios.
//
//     swift build -c release --package-path Benchmarks
//     Benchmarks/.build/release/courier-loopback                      # the matrix, 3 s × 3 rounds, server in a
//                                                                     # child process, client and server pinned
//     Benchmarks/.build/release/courier-loopback --server-in-process  # the server on the clients' threads
//     Benchmarks/.build/release/courier-loopback --protocols http,https,h2   # also over TLS
//     Benchmarks/.build/release/courier-loopback --scale 10000        # 10,000 requests in flight at once
//     Benchmarks/.build/release/courier-loopback --auth-load 10000    # 10,000 requests on a rejected token: one refresh
//
// See `--help` for every option.
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The whole program. Not top-level `await`: that makes an asynchronous `main`, whose main thread ends in
/// `dispatch_main`, and valgrind 3.19 (Debian 12's) crashes on that thread, so `Benchmarks/count-instructions`
/// could not count a run. The main thread waits on a semaphore instead, and the program runs in a detached task (a
/// plain `Task` here would inherit the main actor, which that blocked thread never runs).
@Sendable func program() async {
    let options: Options
    do {
        options = try Options(arguments: Array(CommandLine.arguments.dropFirst()))
    } catch OptionsError.helpRequested {
        print(Options.usage)
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("courier-loopback: \(error)\n\(Options.usage)\n".utf8))
        exit(2)
    }

    if options.serveOnly {
        do {
            try await ServerHost.serveForever(port: options.port, protocols: options.protocols, cpu: options.serveCPU)
        } catch {
            FileHandle.standardError.write(Data("courier-loopback: cannot serve: \(error)\n".utf8))
            exit(1)
        }
    }

    if options.authLoad != nil, options.server != .inProcess {
        FileHandle.standardError.write(Data("courier-loopback: --auth-load runs its own server in this process\n".utf8))
        exit(2)
    }

    if case .external = options.server, options.protocols.contains(where: \.isSecure) {
        FileHandle.standardError.write(Data("courier-loopback: --protocols https,h2 need the embedded server\n".utf8))
        exit(2)
    }

    let plannedPinning: Pinning
    do {
        plannedPinning = try Pinning.plan(options)
    } catch {
        FileHandle.standardError.write(Data("courier-loopback: \(error)\n".utf8))
        exit(2)
    }

    let host: ServerHost
    do {
        host = try await ServerHost.start(
            options.server, protocols: options.protocols, serverCPU: plannedPinning.serverCPU)
    } catch {
        FileHandle.standardError.write(Data("courier-loopback: cannot start the server: \(error)\n".utf8))
        exit(1)
    }
    // Before any client exists, so that the threads the clients start inherit the client's CPU.
    let pinning = plannedPinning.apply(childPID: host.childPID)

    if let requests = options.requests {
        // Untimed, for an instruction counter: no header, no report, the clients one after another.
        var failed = false
        for kind in options.clients {
            do {
                guard let endpoint = host.endpoints[.http] else { break }
                let client = try makeClient(kind, endpoint: endpoint, connections: options.connections)
                for _ in 0..<requests {
                    try await client.fetch(decode: options.decodeRequests)
                }
                await client.shutdown()
                print("\(kind.rawValue): \(requests) requests")
            } catch {
                FileHandle.standardError.write(Data("courier-loopback: \(kind.rawValue): \(error)\n".utf8))
                failed = true
            }
        }
        await host.shutdown()
        exit(failed ? 1 : 0)
    }

    print(Report.header(options, host: host, pinning: pinning))
    fflush(nil)
    var failed = false
    if options.authLoad != nil, let server = host.embedded {
        let authority = TokenAuthority()
        authority.register(on: server)
        let rounds = await runAuthLoad(options, host: host, authority: authority)
        print(Report.authLoad(rounds, options: options))
        failed = rounds.contains { $0.refreshes != 1 || $0.staleErrors > 0 || $0.validErrors > 0 }
    } else if options.scale != nil {
        let result = await runScale(options, host: host)
        print(Report.scale(result, options: options))
        failed = result.succeeded != result.requests
    } else {
        let results: [CellResult]
        do {
            results = try await runMatrix(options, host: host) { result in
                FileHandle.standardError.write(Data((Report.progress(result, options: options) + "\n").utf8))
            }
        } catch {
            FileHandle.standardError.write(Data("courier-loopback: \(error)\n".utf8))
            await host.shutdown()
            exit(1)
        }
        print(Report.matrix(results, options: options))
        let checks = await NegotiationCheck.run(host: host, protocols: options.protocols)
        if !checks.isEmpty {
            print(Report.negotiation(checks))
        }
        if let path = options.svgPath {
            do {
                try Chart.svg(results, options: options).write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                FileHandle.standardError.write(Data("courier-loopback: cannot write \(path): \(error)\n".utf8))
                failed = true
            }
        }
        failed = failed || results.contains { $0.errors > 0 } || checks.contains { !$0.isExpected }
    }
    fflush(nil)
    await host.shutdown()
    exit(failed ? 1 : 0)
}

let finished = DispatchSemaphore(value: 0)
Task.detached {
    await program()
    finished.signal()
}
finished.wait()
