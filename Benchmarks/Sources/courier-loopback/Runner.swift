import Courier
import CourierAsyncHTTPClient
import Foundation

/// What one cell (one protocol × client × concurrency × decode, in one round) measured.
struct CellResult: Sendable {
    let wire: WireProtocol
    let kind: ClientKind
    let concurrency: Int
    let decode: Bool
    let round: Int
    /// Requests that succeeded.
    let requests: Int
    /// Requests that threw.
    let errors: Int
    /// The first error's description, to print once.
    let firstError: String?
    /// Successful requests per second of wall time.
    let requestsPerSecond: Double
    /// Median latency of successful requests, in microseconds.
    let p50: Double
    /// 99th-percentile latency of successful requests, in microseconds.
    let p99: Double
    /// This process's CPU time (user + system) per successful request, in microseconds.
    let cpuPerRequest: Double
    /// The server process's CPU time per successful request, in microseconds; `nil` when not measured.
    let serverCPUPerRequest: Double?
    /// This process's peak RSS during the cell, in KiB.
    let peakRSSKiB: Int
}

/// What a group of workers observed: successful latencies in nanoseconds, and failures.
private struct Samples: Sendable {
    var latencies: [Int64] = []
    var errors = 0
    var firstError: String?

    mutating func merge(_ other: Samples) {
        latencies += other.latencies
        errors += other.errors
        firstError = firstError ?? other.firstError
    }
}

/// Runs the interleaved matrix: every round visits every protocol and cell, and within a cell every client in turn.
///
/// The protocol order and the client order rotate from round to round, so none always runs first (cold) or last.
/// A client that cannot speak a protocol (see ``WireProtocol/supports(_:)``) is left out of that protocol's cells.
///
/// - Parameters:
///   - options: Durations, rounds, protocols, concurrencies and clients.
///   - host: The servers; when they run in a child process its CPU is measured too.
///   - progress: Called after each cell (the tool prints a line to stderr).
/// - Returns: One result per protocol, client, cell and round.
/// - Throws: ``ServerHostError/missingEndpoint(_:)`` when no server speaks a protocol, ``ClientTLSError`` when a
///   client cannot be made for a server.
func runMatrix(
    _ options: Options,
    host: ServerHost,
    progress: (CellResult) -> Void
) async throws -> [CellResult] {
    var lanes: [WireProtocol: [(kind: ClientKind, client: any LoopbackClient)]] = [:]
    do {
        for wire in options.protocols {
            guard let endpoint = host.endpoints[wire] else { throw ServerHostError.missingEndpoint(wire) }
            for kind in options.clients where wire.supports(kind) {
                let client = try makeClient(kind, endpoint: endpoint, connections: options.connections)
                lanes[wire, default: []].append((kind, client))
            }
        }
    } catch {
        for (_, client) in lanes.values.joined() {
            await client.shutdown()
        }
        throw error
    }
    var results: [CellResult] = []
    for round in 1...options.rounds {
        for protocolIndex in options.protocols.indices {
            let wire = options.protocols[(protocolIndex + round - 1) % options.protocols.count]
            let clients = lanes[wire] ?? []
            for concurrency in options.concurrencies {
                for decode in [false, true] {
                    for index in clients.indices {
                        let (kind, client) = clients[(index + round - 1) % clients.count]
                        let result = await runCell(
                            client, wire: wire, kind: kind, concurrency: concurrency, decode: decode, round: round,
                            options: options, serverPID: host.childPID)
                        progress(result)
                        results.append(result)
                    }
                }
            }
        }
    }
    for (_, client) in lanes.values.joined() {
        await client.shutdown()
    }
    return results
}

/// Warms the client up, then drives it at `concurrency` for `options.seconds` and measures.
private func runCell(
    _ client: any LoopbackClient,
    wire: WireProtocol,
    kind: ClientKind,
    concurrency: Int,
    decode: Bool,
    round: Int,
    options: Options,
    serverPID: Int32?
) async -> CellResult {
    if options.warmup > 0 {
        _ = await drive(client, concurrency: concurrency, decode: decode, seconds: options.warmup)
    }
    Probes.resetPeakRSS()
    let serverCPUBefore = serverPID.flatMap(Probes.cpuSeconds(ofProcess:))
    let cpuBefore = Probes.processCPUSeconds()
    let start = ContinuousClock.now
    var samples = await drive(client, concurrency: concurrency, decode: decode, seconds: options.seconds)
    let elapsed = start.duration(to: .now).seconds
    let cpu = Probes.processCPUSeconds() - cpuBefore
    let serverCPUAfter = serverPID.flatMap(Probes.cpuSeconds(ofProcess:))
    let peak = Probes.peakRSSKiB()

    samples.latencies.sort()
    let count = samples.latencies.count
    let perRequest = { (seconds: Double) in count > 0 ? seconds * 1e6 / Double(count) : .nan }
    var serverCPU: Double?
    if let before = serverCPUBefore, let after = serverCPUAfter {
        serverCPU = perRequest(after - before)
    }
    return CellResult(
        wire: wire, kind: kind, concurrency: concurrency, decode: decode, round: round,
        requests: count, errors: samples.errors, firstError: samples.firstError,
        requestsPerSecond: Double(count) / elapsed,
        p50: percentile(samples.latencies, 0.50), p99: percentile(samples.latencies, 0.99),
        cpuPerRequest: perRequest(cpu), serverCPUPerRequest: serverCPU, peakRSSKiB: peak
    )
}

/// The `fraction` percentile of sorted nanosecond latencies, in microseconds (nearest rank).
private func percentile(_ sorted: [Int64], _ fraction: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let rank = min(sorted.count - 1, max(0, Int((Double(sorted.count) * fraction).rounded(.up)) - 1))
    return Double(sorted[rank]) / 1000
}

/// Runs `concurrency` workers, each sending one request after another until `seconds` have passed.
private func drive(_ client: any LoopbackClient, concurrency: Int, decode: Bool, seconds: Double) async -> Samples {
    let deadline = ContinuousClock.now + .nanoseconds(Int64(seconds * 1e9))
    return await withTaskGroup(of: Samples.self) { group in
        for _ in 0..<concurrency {
            group.addTask {
                var samples = Samples()
                samples.latencies.reserveCapacity(Int(seconds * 40_000) / concurrency + 16)
                while ContinuousClock.now < deadline {
                    let start = ContinuousClock.now
                    do {
                        try await client.fetch(decode: decode)
                        let (whole, fraction) = start.duration(to: .now).components
                        samples.latencies.append(whole * 1_000_000_000 + fraction / 1_000_000_000)
                    } catch {
                        samples.errors += 1
                        samples.firstError = samples.firstError ?? "\(error)"
                    }
                }
                return samples
            }
        }
        var merged = Samples()
        for await part in group {
            merged.merge(part)
        }
        return merged
    }
}

/// What the scale test observed.
struct ScaleResult: Sendable {
    let requests: Int
    let succeeded: Int
    let firstError: String?
    let wallSeconds: Double
    /// RSS before the requests were launched, in KiB.
    let baselineRSSKiB: Int
    /// Peak RSS while they were in flight, in KiB.
    let peakRSSKiB: Int
}

/// Launches `options.scale` requests at once against `/delay/{delay}` through Courier on AsyncHTTPClient (or raw
/// AsyncHTTPClient, with `--scale-client raw-ahc`) and waits for all of them.
///
/// The pool holds `options.connections` connections, so most requests wait in AsyncHTTPClient's queue: the wall
/// time is at least `requests / connections × delay`.
///
/// - Returns: How many succeeded, how long it took and the memory it needed.
func runScale(_ options: Options, host: ServerHost) async -> ScaleResult {
    let count = options.scale ?? 0
    let send: @Sendable () async throws -> Void
    let raw: RawAHCLoopbackClient?
    if options.scaleClient == .rawAHC {
        let url = host.baseURL.appendingPathComponent("delay").appendingPathComponent("\(options.delay)")
        let client = RawAHCLoopbackClient(url: url, connections: options.connections)
        send = { try await client.fetch(decode: false) }
        raw = client
    } else {
        let transport = AsyncHTTPClientTransport(configuration: .init(maxConnectionsPerHost: options.connections))
        let client = Client(server: Server(baseURL: host.baseURL), transport: transport)
        let request = DelayRequest(seconds: options.delay)
        send = { _ = try await client.send(request) }
        raw = nil
    }
    try? await send()  // Warm the pool and the code paths.
    let baseline = Probes.currentRSSKiB() ?? Probes.peakRSSKiB()
    Probes.resetPeakRSS()
    let start = ContinuousClock.now
    let (succeeded, firstError) = await withTaskGroup(of: String?.self) { group in
        for _ in 0..<count {
            group.addTask {
                do {
                    try await send()
                    return nil
                } catch {
                    return "\(error)"
                }
            }
        }
        var succeeded = 0
        var firstError: String?
        for await failure in group {
            if let failure { firstError = firstError ?? failure } else { succeeded += 1 }
        }
        return (succeeded, firstError)
    }
    let wall = start.duration(to: .now).seconds
    let peak = Probes.peakRSSKiB()
    await raw?.shutdown()
    return ScaleResult(
        requests: count, succeeded: succeeded, firstError: firstError,
        wallSeconds: wall, baselineRSSKiB: baseline, peakRSSKiB: peak
    )
}

/// `GET /delay/{seconds}`: the server waits, then answers with httpbin's JSON, returned undecoded.
struct DelayRequest: Request {
    typealias Response = Data
    let seconds: Double
    var path: String { "/delay/\(seconds)" }
}
