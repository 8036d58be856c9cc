extension Report {
    /// The header lines that say how each protocol was served and which clients it measured.
    static func protocolLines(_ options: Options, host: ServerHost) -> [String] {
        var lines: [String] = []
        for wire in options.protocols {
            guard let endpoint = host.endpoints[wire] else { continue }
            let how: String
            switch wire {
            case .http: how = "plain HTTP/1.1"
            case .https: how = "HTTP/1.1 over TLS: the server offers only http/1.1, the clients offer only http/1.1"
            case .h2: how = "HTTP/2 over TLS: the server offers h2 then http/1.1 by ALPN, the clients h2 when offered"
            }
            lines.append("\(wire.rawValue): \(endpoint.baseURL.absoluteString) (\(how))")
        }
        lines.append(
            "TLS: a CA made at start (root, intermediate, leaf for localhost); the clients trust that root alone "
                + "(Courier: Client.Configuration.tls = TLSOptions(trust: .only(root)), raw AHC and OpenAPI: "
                + "HTTPClient.Configuration.tlsConfiguration.trustRoots); connections are kept alive, so the "
                + "handshakes fall in each cell's warm-up")
        let skipped = options.clients.filter { kind in options.protocols.contains { !$0.supports(kind) } }
        if !skipped.isEmpty {
            lines.append(
                "not measured over TLS: \(skipped.map(\.rawValue).joined(separator: ", ")) (on Linux URLSession "
                    + "cannot trust a custom CA; Courier's URLSessionTransport reports unsupported)")
        }
        return lines
    }

    /// Courier on AsyncHTTPClient next to raw AsyncHTTPClient, one row per protocol and cell.
    static func protocolComparison(_ results: [CellResult], options: Options) -> [[String]] {
        var table = [
            [
                "proto", "conc", "decode", "courier-ahc req/s", "raw-ahc req/s", "req/s ratio",
                "courier-ahc CPU µs/req", "raw-ahc CPU µs/req", "CPU/req ratio",
            ]
        ]
        for wire in options.protocols {
            for concurrency in options.concurrencies {
                for decode in [false, true] {
                    let cells = { (kind: ClientKind) in
                        results.filter {
                            $0.wire == wire && $0.kind == kind && $0.concurrency == concurrency && $0.decode == decode
                        }
                    }
                    let courier = cells(.courierAHC)
                    let raw = cells(.rawAHC)
                    guard !courier.isEmpty, !raw.isEmpty else { continue }
                    let paired = pairedRatios(
                        results, wire: wire, kind: .courierAHC, baseline: .rawAHC, concurrency: concurrency,
                        decode: decode, rounds: options.rounds)
                    table.append([
                        wire.rawValue, "\(concurrency)", decode ? "JSON" : "none",
                        grouped(median(courier.map(\.requestsPerSecond))),
                        grouped(median(raw.map(\.requestsPerSecond))),
                        fixed(median(paired.throughput), 3),
                        fixed(median(courier.map(\.cpuPerRequest)), 1), fixed(median(raw.map(\.cpuPerRequest)), 1),
                        fixed(median(paired.cpu), 3),
                    ])
                }
            }
        }
        return table
    }

    /// What each TLS server negotiated over the run.
    static func negotiation(_ checks: [NegotiationCheck]) -> String {
        var table = [["proto", "ALPN expected", "connections by ALPN (the check's own included)", "as expected"]]
        for check in checks {
            let counts =
                check.counts.map { counts in
                    counts.sorted { $0.key < $1.key }.map { "\($0.key) × \($0.value)" }.joined(separator: ", ")
                } ?? "not read: \(check.error ?? "unknown")"
            table.append([
                check.wire.rawValue, check.wire.expectedApplicationProtocol?.rawValue ?? "—", counts,
                check.isExpected ? "yes" : "NO",
            ])
        }
        return "\n## Negotiated protocols (per TLS server, whole run)\n" + render(table)
    }
}
