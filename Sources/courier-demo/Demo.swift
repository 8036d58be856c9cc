import Courier
import CourierAsyncHTTPClient
import CourierTestServer
import Foundation
import HTTPTypes
import Logging

/// What every scenario gets: the servers, a client factory, and the terminal.
struct DemoContext: Sendable {
    let production: URL
    let staging: URL
    let transportName: String
    let makeTransport: @Sendable () -> any Transport
    let verbose: Bool
    let terminal: Terminal
    /// True when running against a server given with `--target` (an httpbin), not the embedded ones.
    let isExternalTarget: Bool

    /// A client for `server` whose per-call log line (request, status, time, decision trace) goes to the terminal.
    func client(
        _ server: Server? = nil,
        configure: (inout Client.Configuration) -> Void = { _ in }
    ) -> Client {
        var configuration = Client.Configuration(logger: terminal.logger(verbose: verbose))
        configuration.retryPolicy.backoff = .exponential(initial: .milliseconds(200), jitter: true)
        // A call that stalls fails the scenario instead of hanging the demo (and CI, which runs it as a smoke test).
        configuration.timeout = .seconds(60)
        if isExternalTarget, let host = production.host, production.scheme == "http" {
            // An httpbin given with `--target` may be plain HTTP on another machine: the demo sends it nothing secret.
            configuration.cleartextPolicy = .hosts([host])
        }
        if verbose {
            let terminal = terminal
            configuration.adapters.append(
                .custom("show") { request, _ in
                    terminal.detail("→ " + request.cURLDescription())
                    return request
                }
            )
        }
        configure(&configuration)
        return Client(
            server: server ?? Server(baseURL: production, environment: .production),
            transport: makeTransport(),
            configuration: configuration
        )
    }
}

/// One scenario of the seeds' story.
struct Scenario: Sendable {
    let number: Int
    let title: String
    /// Whether it makes sense against an external httpbin (`--target`).
    let runsAgainstExternalTarget: Bool
    /// Runs the scenario; returns whether everything behaved as expected.
    let run: @Sendable (DemoContext) async throws -> Bool
}

/// A check that prints ✓ or ✗ and reports whether it held.
func check(_ condition: Bool, _ what: String, terminal: Terminal) -> Bool {
    terminal.line((condition ? "  ✓ " : "  ✗ ") + what)
    return condition
}
