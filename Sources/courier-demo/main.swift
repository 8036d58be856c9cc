// courier-demo: the seeds' scenarios against Courier's embedded server (no internet, nothing to install).
//
//     swift run courier-demo [--only N] [--transport asynchttpclient|urlsession] [--verbose] [--target URL]
//
// Exit code 0 only if every scenario behaved as expected: the demo doubles as a smoke test.
import Courier
import CourierAsyncHTTPClient
import CourierTestServer
import CourierURLSession
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), arguments.indices.contains(index + 1) else { return nil }
    return arguments[index + 1]
}

if arguments.contains("--help") || arguments.contains("-h") {
    print("usage: courier-demo [--only N] [--transport asynchttpclient|urlsession] [--verbose] [--target URL]")
    exit(0)
}
let only = option("--only").flatMap(Int.init)
let transportName = option("--transport") ?? "asynchttpclient"
let verbose = arguments.contains("--verbose")
let target = option("--target").flatMap(URL.init(string:))
let makeTransport: @Sendable () -> any Transport
switch transportName {
case "asynchttpclient":
    makeTransport = { AsyncHTTPClientTransport() }
case "urlsession":
    makeTransport = { URLSessionTransport() }
default:
    print("unknown transport '\(transportName)'; available: asynchttpclient, urlsession")
    exit(2)
}

let terminal = Terminal()
var servers: [TestServer] = []
let production: URL
let staging: URL
if let target {
    production = target
    staging = target
} else {
    let productionServer = try await TestServer.start()
    let stagingServer = try await TestServer.start()
    servers = [productionServer, stagingServer]
    for server in servers {
        DemoRoutes.install(on: server)
    }
    production = productionServer.baseURL
    staging = stagingServer.baseURL
}

terminal.line(
    "Courier demo — \(target.map { "against \($0)" } ?? "embedded servers at \(production) and \(staging)"), transport: \(transportName)"
)
let context = DemoContext(
    production: production,
    staging: staging,
    transportName: transportName,
    makeTransport: makeTransport,
    verbose: verbose,
    terminal: terminal,
    isExternalTarget: target != nil
)

var failures: [Int] = []
var ran = 0
for scenario in Scenarios.all where only == nil || only == scenario.number {
    if target != nil && !scenario.runsAgainstExternalTarget { continue }
    terminal.heading("\(scenario.number). \(scenario.title)")
    ran += 1
    do {
        if try await !scenario.run(context) { failures.append(scenario.number) }
    } catch {
        terminal.line("  ✗ failed: \(error)")
        failures.append(scenario.number)
    }
}
for server in servers {
    try await server.shutdown()
}
terminal.line("")
if ran == 0 {
    terminal.line("no scenario matched")
    exit(2)
}
if failures.isEmpty {
    terminal.line("All \(ran) scenarios behaved as expected.")
} else {
    terminal.line("Scenarios that did not behave as expected: \(failures.map(String.init).joined(separator: ", "))")
    exit(1)
}
