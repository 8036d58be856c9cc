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
    /// This process's context switches (voluntary and involuntary) per successful request.
    let switchesPerRequest: Double
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

/// Runs the interleaved matrix: every round visits every protocol and cell, and within a cell the clients take turns.
///
/// A cell's clients are first warmed up, then measured in ``Options/slices`` turns each, one slice of the cell's
/// seconds at a time (A B C A B C …), and each client's slices are summed. So a change in the machine's speed during
/// a cell (this VM's varies by half for seconds at a time) reaches every client alike, and the ratios taken within a
/// round compare clients measured over the same stretch of time. The protocol order and the client order rotate from
/// round to round, so none always runs first (cold) or last. A client that cannot speak a protocol (see
/// ``WireProtocol/supports(_:)``) is left out of that protocol's cells.
///
/// - Parameters:
///   - options: Durations, rounds, slices, protocols, concurrencies and clients.
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
            let order = clients.indices.map { clients[($0 + round - 1) % clients.count] }
            for concurrency in options.concurrencies {
                for decode in [false, true] {
                    if options.warmup > 0 {
                        for (_, client) in order {
                            _ = await drive(client, concurrency: concurrency, decode: decode, seconds: options.warmup)
                        }
                    }
                    var totals = Array(repeating: Measurement(), count: order.count)
                    for _ in 0..<options.slices {
                        for (position, entry) in order.enumerated() {
                            totals[position].add(
                                await measure(
                                    entry.client, concurrency: concurrency, decode: decode,
                                    seconds: options.seconds / Double(options.slices), serverPID: host.childPID))
                        }
                    }
                    for (position, entry) in order.enumerated() {
                        let result = totals[position].result(
                            wire: wire, kind: entry.kind, concurrency: concurrency, decode: decode, round: round)
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

/// What one client's slices of a cell measured, summed.
private struct Measurement {
    var samples = Samples()
    var elapsed = 0.0
    var cpu = 0.0
    var switches = 0
    /// The server process's CPU time; `nil` when it is not measured (the server runs in this process) or a slice
    /// could not read it.
    var serverCPU: Double?
    var peakRSSKiB = 0
    /// How many slices were added.
    var slices = 0

    mutating func add(_ slice: Measurement) {
        samples.merge(slice.samples)
        elapsed += slice.elapsed
        cpu += slice.cpu
        switches += slice.switches
        // A sum over every slice, or none: a slice without the figure must not leave a sum of the others.
        if slices == 0 {
            serverCPU = slice.serverCPU
        } else if let total = serverCPU, let more = slice.serverCPU {
            serverCPU = total + more
        } else {
            serverCPU = nil
        }
        slices += 1
        peakRSSKiB = max(peakRSSKiB, slice.peakRSSKiB)
    }

    func result(wire: WireProtocol, kind: ClientKind, concurrency: Int, decode: Bool, round: Int) -> CellResult {
        let latencies = samples.latencies.sorted()
        let count = latencies.count
        let perRequest = { (seconds: Double) in count > 0 ? seconds * 1e6 / Double(count) : .nan }
        return CellResult(
            wire: wire, kind: kind, concurrency: concurrency, decode: decode, round: round,
            requests: count, errors: samples.errors, firstError: samples.firstError,
            requestsPerSecond: elapsed > 0 ? Double(count) / elapsed : .nan,
            p50: percentile(latencies, 0.50), p99: percentile(latencies, 0.99),
            cpuPerRequest: perRequest(cpu), switchesPerRequest: count > 0 ? Double(switches) / Double(count) : .nan,
            serverCPUPerRequest: serverCPU.map(perRequest), peakRSSKiB: peakRSSKiB
        )
    }
}

/// Drives `client` at `concurrency` for `seconds` and measures one slice: its wall time, this process's CPU time,
/// the server process's (when it has one) and the peak RSS.
private func measure(
    _ client: any LoopbackClient,
    concurrency: Int,
    decode: Bool,
    seconds: Double,
    serverPID: Int32?
) async -> Measurement {
    Probes.resetPeakRSS()
    let serverCPUBefore = serverPID.flatMap(Probes.cpuSeconds(ofProcess:))
    let cpuBefore = Probes.processCPUSeconds()
    let switchesBefore = Probes.processContextSwitches()
    let start = ContinuousClock.now
    let samples = await drive(client, concurrency: concurrency, decode: decode, seconds: seconds)
    var slice = Measurement()
    slice.elapsed = start.duration(to: .now).seconds
    slice.cpu = Probes.processCPUSeconds() - cpuBefore
    slice.switches = Probes.processContextSwitches() - switchesBefore
    if let before = serverCPUBefore, let after = serverPID.flatMap(Probes.cpuSeconds(ofProcess:)) {
        slice.serverCPU = after - before
    }
    slice.peakRSSKiB = Probes.peakRSSKiB()
    slice.samples = samples
    return slice
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
