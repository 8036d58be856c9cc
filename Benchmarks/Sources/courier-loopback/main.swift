// Loopback throughput and latency: Courier against the raw transports it drives, side by side, as ratios.
//
//     swift build -c release --package-path Benchmarks
//     Benchmarks/.build/release/courier-loopback                      # the matrix, 3 s × 3 rounds
//     Benchmarks/.build/release/courier-loopback --server-process     # the same, client CPU without the server's
//     Benchmarks/.build/release/courier-loopback --scale 10000        # 10,000 requests in flight at once
//
// See `--help` for every option.
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
    try await ServerHost.serveForever(port: options.port)
}

let host: ServerHost
do {
    host = try await ServerHost.start(options.server)
} catch {
    FileHandle.standardError.write(Data("courier-loopback: cannot start the server: \(error)\n".utf8))
    exit(1)
}

print(Report.header(options, host: host))
fflush(nil)
var failed = false
if options.scale != nil {
    let result = await runScale(options, host: host)
    print(Report.scale(result, options: options))
    failed = result.succeeded != result.requests
} else {
    let results = await runMatrix(options, host: host) { result in
        FileHandle.standardError.write(Data((Report.progress(result, rounds: options.rounds) + "\n").utf8))
    }
    print(Report.matrix(results, options: options))
    failed = results.contains { $0.errors > 0 }
}
fflush(nil)
await host.shutdown()
exit(failed ? 1 : 0)
