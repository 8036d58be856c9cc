import Foundation

/// Turns measurements into the printed report: a header saying what CPU and RSS include, the table of medians,
/// and the Courier / raw ratios.
enum Report {
    /// The lines before any measurement: the machine, the server and what the CPU column includes.
    ///
    /// - Parameters:
    ///   - options: What was asked for.
    ///   - host: The servers.
    ///   - pinning: ``Pinning/apply(childPID:)``'s line: the CPUs of the client and the server, or why not pinned.
    static func header(_ options: Options, host: ServerHost, pinning: String) -> String {
        let info = ProcessInfo.processInfo
        var lines = [
            "# courier-loopback",
            "machine: \(info.activeProcessorCount) cores, \(info.operatingSystemVersionString)",
            "server: \(host.baseURL.absoluteString)/tiny (\(TinyPayload.json.utf8.count)-byte JSON body)",
            pinning,
        ]
        if options.protocols.contains(where: \.isSecure) {
            lines += protocolLines(options, host: host)
        }
        switch options.server {
        case .inProcess:
            lines.append(
                "CPU: this process, which also runs the embedded server on the same event loops and threads: "
                    + "the server's share cannot be separated and is included (the default, --server-process, "
                    + "separates it)")
            lines.append("RSS: this process, server included")
        case .childProcess:
            lines.append(
                "CPU: clients only; the server runs in a child process, its CPU shown separately (10 ms ticks)")
            lines.append("RSS: clients only")
        case .external:
            lines.append("CPU and RSS: clients only; the external server is not measured")
        }
        if options.scale == nil, options.authLoad == nil {
            lines.append(
                "cells: \(options.seconds) s each after \(options.warmup) s warm-up, \(options.rounds) rounds, "
                    + "clients alternating in \(options.slices) slices of \(options.seconds / Double(options.slices)) s "
                    + "within a cell; medians over rounds; AHC pool \(options.connections) connections")
        }
        if !Probes.canResetPeak {
            lines.append("peak RSS: lifetime peak of the process (cannot reset it per cell here)")
        }
        return lines.joined(separator: "\n")
    }

    /// One progress line for a finished cell.
    static func progress(_ result: CellResult, options: Options) -> String {
        let wire = showsProtocol(options) ? "\(result.wire.rawValue) " : ""
        return "round \(result.round)/\(options.rounds) \(wire)c=\(result.concurrency) "
            + "\(result.decode ? "decode" : "no-decode") "
            + "\(result.kind.rawValue): \(grouped(result.requestsPerSecond)) req/s, "
            + "\(fixed(result.cpuPerRequest, 1)) µs CPU/req, \(result.errors) errors"
    }

    /// Whether the tables need a protocol column: anything but plain HTTP alone was measured.
    static func showsProtocol(_ options: Options) -> Bool {
        options.protocols != [.http]
    }

    /// The table of medians over rounds, then the ratios (and, over several protocols, Courier on AHC against raw
    /// AHC per protocol).
    static func matrix(_ results: [CellResult], options: Options) -> String {
        let measuresServer = results.contains { $0.serverCPUPerRequest != nil }
        let protocolColumn = showsProtocol(options)
        var table = [
            (protocolColumn ? ["proto"] : []) + [
                "client", "conc", "decode", "req/s", "p50 µs", "p99 µs", "CPU µs/req", "switches/req",
            ]
                + (measuresServer ? ["server µs/req"] : []) + ["peak RSS MiB", "errors"]
        ]
        var firstErrors: [String] = []
        for wire in options.protocols {
            for concurrency in options.concurrencies {
                for decode in [false, true] {
                    for kind in options.clients {
                        let cells = results.filter {
                            $0.wire == wire && $0.kind == kind && $0.concurrency == concurrency && $0.decode == decode
                        }
                        guard !cells.isEmpty else { continue }
                        let server = cells.compactMap(\.serverCPUPerRequest)
                        table.append(
                            (protocolColumn ? [wire.rawValue] : []) + [
                                kind.rawValue, "\(concurrency)", decode ? "JSON" : "none",
                                grouped(median(cells.map(\.requestsPerSecond))),
                                fixed(median(cells.map(\.p50)), 0), fixed(median(cells.map(\.p99)), 0),
                                fixed(median(cells.map(\.cpuPerRequest)), 1),
                                fixed(median(cells.map(\.switchesPerRequest)), 2),
                            ] + (measuresServer ? [fixed(median(server), 1)] : []) + [
                                fixed(Double(cells.map(\.peakRSSKiB).max() ?? 0) / 1024, 1),
                                "\(cells.map(\.errors).reduce(0, +))",
                            ])
                        let label = protocolColumn ? "\(wire.rawValue) \(kind.rawValue)" : kind.rawValue
                        firstErrors += cells.compactMap { $0.firstError.map { "\(label): \($0)" } }.prefix(1)
                    }
                }
            }
        }
        var text = "\n## Medians over \(options.rounds) rounds\n" + render(table)
        text +=
            "\n\n## Ratios (client / raw transport, paired within each round, then the median of the rounds; "
            + "throughput ≥ 1 and CPU ≤ 1 is better)\n"
        text +=
            "Per-round columns: round 1, 2, … in order; each is one client over its baseline measured in that round.\n\n"
        text += render(ratios(results, options: options))
        if protocolColumn, options.clients.contains(.courierAHC), options.clients.contains(.rawAHC) {
            text += "\n\n## Courier on AsyncHTTPClient vs raw AsyncHTTPClient, per protocol\n"
            text += "Medians over rounds; the ratios are medians of the per-round pairs "
            text += "(same round, same protocol).\n\n"
            text += render(protocolComparison(results, options: options))
        }
        if !firstErrors.isEmpty {
            text += "\n\nfirst errors:\n" + firstErrors.map { "  " + $0 }.joined(separator: "\n")
        }
        return text
    }

    /// Each client / its raw transport (Courier-AHC, OpenAPI-AHC and Courier-URLSession), then Courier-AHC /
    /// OpenAPI-AHC, Courier-AHC / raw-ahc-idle (raw AHC with Courier's idle timeout) and Courier-AHC / raw-ahc-task
    /// (that, with a task per request, as Courier's calls have), and what those two features cost raw AHC itself
    /// (raw-ahc-idle / raw-ahc, raw-ahc-task / raw-ahc-idle), and the two halves of Courier-AHC's cost: its transport
    /// alone over raw AHC (courier-transport / raw-ahc-idle) and its pipeline over its transport (courier-ahc /
    /// courier-transport), and, when asked for, the delegate-based API with its own idle timer over the async API with
    /// AsyncHTTPClient's (raw-ahc-delegate-idle / raw-ahc-idle, which also leaves out the request tracing only the
    /// async API does), cell by cell, per protocol:
    /// each ratio per round (both clients of a pair measured in the same round), then the median of those rounds.
    private static func ratios(_ results: [CellResult], options: Options) -> [[String]] {
        let protocolColumn = showsProtocol(options)
        var table = [
            (protocolColumn ? ["proto"] : [])
                + [
                    "pair", "conc", "decode", "req/s ratio per round", "median", "CPU/req ratio per round", "median",
                    "CPU µs/req over raw per round", "median",
                ]
        ]
        let perRound = { (values: [Double], digits: Int) in
            values.map { fixed($0, digits) }.joined(separator: " ")
        }
        let pairs =
            options.clients.compactMap { kind in kind.baseline.map { (kind, $0) } }
            + [
                (ClientKind.courierAHC, ClientKind.openapiAHC), (ClientKind.courierAHC, ClientKind.rawAHCIdle),
                (ClientKind.courierAHC, ClientKind.rawAHCTask), (ClientKind.rawAHCIdle, ClientKind.rawAHC),
                (ClientKind.rawAHCTask, ClientKind.rawAHCIdle), (ClientKind.courierTransport, ClientKind.rawAHCIdle),
                (ClientKind.courierAHC, ClientKind.courierTransport),
                (ClientKind.rawAHCDelegateIdle, ClientKind.rawAHCIdle),
            ]
        for wire in options.protocols {
            for (kind, baseline) in pairs {
                guard options.clients.contains(kind), options.clients.contains(baseline),
                    wire.supports(kind), wire.supports(baseline)
                else { continue }
                for concurrency in options.concurrencies {
                    for decode in [false, true] {
                        let paired = pairedRatios(
                            results, wire: wire, kind: kind, baseline: baseline, concurrency: concurrency,
                            decode: decode, rounds: options.rounds)
                        table.append(
                            (protocolColumn ? [wire.rawValue] : []) + [
                                "\(kind.rawValue) / \(baseline.rawValue)", "\(concurrency)", decode ? "JSON" : "none",
                                perRound(paired.throughput, 2), fixed(median(paired.throughput), 3),
                                perRound(paired.cpu, 2), fixed(median(paired.cpu), 3),
                                perRound(paired.extraCPU, 1), fixed(median(paired.extraCPU), 1),
                            ])
                    }
                }
            }
        }
        return table
    }

    /// `kind` against `baseline` in each round where both measured the cell: req/s ratio, CPU per request ratio,
    /// and the extra CPU µs per request.
    static func pairedRatios(
        _ results: [CellResult],
        wire: WireProtocol,
        kind: ClientKind,
        baseline: ClientKind,
        concurrency: Int,
        decode: Bool,
        rounds: Int
    ) -> (throughput: [Double], cpu: [Double], extraCPU: [Double]) {
        var throughput: [Double] = []
        var cpu: [Double] = []
        var extra: [Double] = []
        for round in 1...max(rounds, 1) {
            let pick = { (kind: ClientKind) in
                results.first {
                    $0.wire == wire && $0.kind == kind && $0.concurrency == concurrency && $0.decode == decode
                        && $0.round == round
                }
            }
            guard let client = pick(kind), let raw = pick(baseline) else { continue }
            throughput.append(client.requestsPerSecond / raw.requestsPerSecond)
            cpu.append(client.cpuPerRequest / raw.cpuPerRequest)
            extra.append(client.cpuPerRequest - raw.cpuPerRequest)
        }
        return (throughput, cpu, extra)
    }

    /// The scale test's result.
    static func scale(_ result: ScaleResult, options: Options) -> String {
        let grownKiB = max(0, result.peakRSSKiB - result.baselineRSSKiB)
        let floor = Double(result.requests) / Double(options.connections) * options.delay
        var lines = [
            "\n## Scale: \(result.requests) requests at once, \(options.scaleClient.rawValue), GET /delay/\(options.delay)",
            "all succeeded: \(result.succeeded == result.requests ? "yes" : "NO") "
                + "(\(result.succeeded) of \(result.requests))",
            "wall time: \(fixed(result.wallSeconds, 2)) s (floor with \(options.connections) connections: "
                + "\(fixed(floor, 2)) s; the rest wait in AsyncHTTPClient's queue)",
            "RSS: \(fixed(Double(result.baselineRSSKiB) / 1024, 1)) MiB before, "
                + "\(fixed(Double(result.peakRSSKiB) / 1024, 1)) MiB peak",
            "RSS per in-flight request: \(fixed(Double(grownKiB) * 1024 / Double(max(1, result.requests)), 0)) bytes",
        ]
        if let error = result.firstError {
            lines.append("first error: \(error)")
        }
        return lines.joined(separator: "\n")
    }

    /// The auth-under-load test's rounds and their medians.
    static func authLoad(_ rounds: [AuthLoadRound], options: Options) -> String {
        let count = rounds.first?.requests ?? 0
        var table: [[String]] = [
            [
                "round", "stale token: wall s", "token requests", "401s sent", "errors", "valid token: wall s",
                "errors", "stale / valid",
            ]
        ]
        for (index, round) in rounds.enumerated() {
            let rejections: String = grouped(Double(round.rejections))
            let ratio: String = fixed(round.staleSeconds / round.validSeconds, 2)
            table.append([
                "\(index + 1)", fixed(round.staleSeconds, 3), "\(round.refreshes)", rejections,
                "\(round.staleErrors)", fixed(round.validSeconds, 3), "\(round.validErrors)", ratio,
            ])
        }
        let staleSeconds: [Double] = rounds.map { $0.staleSeconds }
        let validSeconds: [Double] = rounds.map { $0.validSeconds }
        let ratios: [Double] = rounds.map { $0.staleSeconds / $0.validSeconds }
        let rejections: [Double] = rounds.map { Double($0.rejections) }
        let maxRefreshes: Int = rounds.map { $0.refreshes }.max() ?? 0
        let staleErrors: Int = rounds.reduce(0) { $0 + $1.staleErrors }
        let validErrors: Int = rounds.reduce(0) { $0 + $1.validErrors }
        let summary: [String] = [
            "median", fixed(median(staleSeconds), 3), "\(maxRefreshes) (max)", grouped(median(rejections)),
            "\(staleErrors) (sum)", fixed(median(validSeconds), 3), "\(validErrors) (sum)", fixed(median(ratios), 2),
        ]
        table.append(summary)
        let refreshedOnce = rounds.allSatisfy { $0.refreshes == 1 }
        let clean = staleErrors == 0 && validErrors == 0
        var text = "\n## Auth under load: \(grouped(Double(count))) concurrent requests, "
        text += "AHC pool \(options.connections) connections, \(rounds.count) rounds\n"
        let limit = options.authLimit ?? options.connections
        if limit > 0 {
            text += "Stale token: the client starts with a token the server rejects; the calls holding one of the "
            text += "client's maxConcurrentRequests = \(limit) slots get a 401, one refresh (priority lane, its own "
            text += "connection) renews the token, the rejected calls are replayed once, and the calls waiting for a "
            text += "slot go out with the new token."
        } else {
            text += "Stale token, no maxConcurrentRequests: every call is signed with the rejected token before it "
            text += "queues for a connection, gets a 401, joins the one refresh (priority lane) and is replayed once."
        }
        text += " Valid token: the same load and client settings, signed in with the current token.\n\n"
        text += render(table)
        text += "\n\nexactly one token request per round: \(refreshedOnce ? "yes" : "NO"); "
        text += "no errors: \(clean ? "yes" : "NO")"
        if let error = rounds.compactMap({ $0.firstError }).first {
            text += "\nfirst error: \(error)"
        }
        return text
    }

    /// The median (mean of the middle two for an even count); NaN when empty.
    static func median(_ values: [Double]) -> Double {
        let sorted = values.filter { !$0.isNaN }.sorted()
        guard !sorted.isEmpty else { return .nan }
        let middle = sorted.count / 2
        return sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
    }

    /// A Markdown table with padded columns.
    static func render(_ rows: [[String]]) -> String {
        let widths = (0..<(rows.first?.count ?? 0)).map { column in
            rows.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0
        }
        func line(_ row: [String]) -> String {
            "| "
                + row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
                .joined(separator: " | ") + " |"
        }
        guard let head = rows.first else { return "" }
        let rule = "|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|"
        return ([line(head), rule] + rows.dropFirst().map(line)).joined(separator: "\n")
    }

    static func fixed(_ value: Double, _ digits: Int) -> String {
        value.isFinite ? String(format: "%.\(digits)f", value) : "—"
    }

    static func grouped(_ value: Double) -> String {
        guard value.isFinite else { return "—" }
        let digits = String(Int(value.rounded()))
        var result = ""
        for (index, character) in digits.reversed().enumerated() {
            if index > 0, index.isMultiple(of: 3) { result.append(",") }
            result.append(character)
        }
        return String(result.reversed())
    }
}
