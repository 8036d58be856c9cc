// courier-streaming: Courier's event streams measured (issue #18).
//
// 1. Throughput, one core, in this process: the same event stream (chat-completion chunks with ids, event types and
//    keep-alive comments, in 16 KiB chunks) parsed by Courier's `serverSentEvents()` / `serverSentEvents(of:)` and by
//    swift-openapi-runtime's `asDecodedServerSentEvents()` / `asDecodedServerSentEventsWithJSONData(of:)`, rounds
//    interleaved, medians and their ratios.
// 2. Latency: the embedded server in a child process (pinned to another CPU than this one where there are two) sends
//    events stamped with its monotonic clock just before each flush; the client reads them with `Client.events(_:)`
//    on each transport and reports, per event, how long after the flush it reached the loop: p50, p90, p99, max.
//
//     swift run -c release courier-streaming [--events N] [--rounds R] [--latency-events N] [--interval-ms M]
//     swift run -c release courier-streaming --serve      (only the server; prints its URL)
import Courier
import CourierAsyncHTTPClient
import CourierTestServer
import CourierURLSession
import Foundation
import OpenAPIRuntime

// MARK: Options

let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String, _ fallback: Int) -> Int {
    guard let index = arguments.firstIndex(of: name), arguments.indices.contains(index + 1),
        let value = Int(arguments[index + 1]), value > 0
    else { return fallback }
    return value
}
let eventCount = option("--events", 200_000)
let rounds = option("--rounds", 3)
let latencyEvents = option("--latency-events", 1000)
let intervalMilliseconds = option("--interval-ms", 2)

// MARK: The server, alone

if arguments.contains("--serve") {
    let server = try await TestServer.start()
    FileHandle.standardOutput.write(Data("listening \(server.baseURL.absoluteString)\n".utf8))
    // Serve until the parent closes stdin (or dies).
    while let line = readLine(), line != "quit" {}
    try await server.shutdown()
    exit(0)
}

// MARK: Throughput

/// A chunked body in memory, as a transport hands it out.
struct Chunks: AsyncSequence, Sendable {
    let chunks: [ArraySlice<UInt8>]
    func makeAsyncIterator() -> Iterator { Iterator(chunks: chunks) }
    struct Iterator: AsyncIteratorProtocol {
        let chunks: [ArraySlice<UInt8>]
        var index = 0
        mutating func next() async throws -> ArraySlice<UInt8>? {
            guard index < chunks.count else { return nil }
            index += 1
            return chunks[index - 1]
        }
    }
}

struct Delta: Decodable, Hashable, Sendable {
    struct Choice: Decodable, Hashable, Sendable {
        struct Content: Decodable, Hashable, Sendable { var content: String }
        var index: Int
        var delta: Content
    }
    var id: String
    var object: String
    var choices: [Choice]
}

var text = ""
for number in 0..<eventCount {
    text += "id: \(number)\nevent: delta\n"
    text += #"data: {"id":"chatcmpl-\#(number)","object":"chat.completion.chunk","#
    text += #""choices":[{"index":0,"delta":{"content":" token \#(number % 97)"}}]}"# + "\n\n"
    if number % 50 == 0 { text += ": keep-alive\n\n" }
}
let bytes = Array(text.utf8)
let chunks = stride(from: 0, to: bytes.count, by: 16 * 1024).map { bytes[$0..<min($0 + 16 * 1024, bytes.count)] }
let megabytes = Double(bytes.count) / 1_000_000
/// Each event's data alone, for the ceiling: JSONDecoder with no parsing around it.
let payloads = text.split(separator: "\n").filter { $0.hasPrefix("data: ") }.map { Data($0.dropFirst(6).utf8) }

/// Seconds taken by `body`, which must return the number of events it saw.
func time(_ body: () async throws -> Int) async throws -> Double {
    let start = ContinuousClock.now
    let count = try await body()
    let elapsed = ContinuousClock.now - start
    guard count == eventCount else { throw BenchmarkError("saw \(count) events, not \(eventCount)") }
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

let cases: [(name: String, run: () async throws -> Int)] = [
    (
        "Courier serverSentEvents()",
        {
            var count = 0
            for try await _ in Chunks(chunks: chunks).serverSentEvents() { count += 1 }
            return count
        }
    ),
    (
        "OpenAPIRuntime asDecodedServerSentEvents()",
        {
            var count = 0
            // It hands out the comment-only blocks as events without data; they are not events by the WHATWG rules.
            for try await event in Chunks(chunks: chunks).asDecodedServerSentEvents() where event.data != nil {
                count += 1
            }
            return count
        }
    ),
    (
        "Courier serverSentEvents(of: Delta.self)",
        {
            var count = 0
            for try await _ in Chunks(chunks: chunks).serverSentEvents(of: Delta.self) { count += 1 }
            return count
        }
    ),
    (
        "OpenAPIRuntime asDecodedServerSentEventsWithJSONData(of: Delta.self)",
        {
            var count = 0
            for try await event in Chunks(chunks: chunks).asDecodedServerSentEventsWithJSONData(of: Delta.self)
            where event.data != nil {
                count += 1
            }
            return count
        }
    ),
    (
        "JSONDecoder alone, on each event's data (the ceiling for typed events)",
        {
            let decoder = JSONDecoder()
            var count = 0
            for payload in payloads {
                _ = try decoder.decode(Delta.self, from: payload)
                count += 1
            }
            return count
        }
    ),
]

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}
func format(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }

print("# Courier streaming benchmarks\n")
print(
    "Throughput: \(eventCount) events, \(format(megabytes)) MB in \(chunks.count) chunks of 16 KiB, one task, "
        + "\(rounds) interleaved rounds, medians.\n")
var seconds = Array(repeating: [Double](), count: cases.count)
for _ in 0..<rounds {
    for (index, entry) in cases.enumerated() { seconds[index].append(try await time(entry.run)) }
}
print("| parser | MB/s | events/s |")
print("|---|---|---|")
let medians = seconds.map(median)
for (index, entry) in cases.enumerated() {
    print(
        "| \(entry.name) | \(format(megabytes / medians[index])) | \(format(Double(eventCount) / medians[index] / 1000))k |"
    )
}
print(
    "\nRatios (Courier / OpenAPIRuntime, same run): raw events \(format(medians[1] / medians[0], 2))×, typed JSON "
        + "events \(format(medians[3] / medians[2], 2))×. Typed events run at "
        + "\(format(medians[4] / medians[2] * 100, 0)) % of JSONDecoder alone.\n")

// MARK: Latency

/// The system's monotonic clock, as the server stamps it (`DispatchTime`, shared by every process).
func monotonicNanoseconds() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}

/// `taskset` pins: this process to CPU 0, the server to CPU 1, when there are two CPUs and taskset.
func pinning() -> (client: String, server: String)? {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset"),
        ProcessInfo.processInfo.activeProcessorCount >= 2
    else { return nil }
    return ("0", "1")
}

let pins = pinning()
if let pins {
    let taskset = Process()
    taskset.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
    taskset.arguments = ["-a", "-p", "-c", pins.client, "\(ProcessInfo.processInfo.processIdentifier)"]
    taskset.standardOutput = FileHandle.nullDevice
    try taskset.run()
    taskset.waitUntilExit()
}
let executable =
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
let child = Process()
if let pins {
    child.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
    child.arguments = ["-c", pins.server, executable, "--serve"]
} else {
    child.executableURL = URL(fileURLWithPath: executable)
    child.arguments = ["--serve"]
}
let childOutput = Pipe()
let childInput = Pipe()
child.standardOutput = childOutput
child.standardInput = childInput
try child.run()
var announced = ""
while !announced.contains("\n") {
    let data = childOutput.fileHandleForReading.availableData
    guard !data.isEmpty else { break }
    announced += String(decoding: data, as: UTF8.self)
}
guard let line = announced.split(separator: "\n").first, line.hasPrefix("listening "),
    let serverURL = URL(string: String(line.dropFirst("listening ".count)))
else { throw BenchmarkError("the server did not start: \(announced)") }

struct Ticks: Request {
    typealias Response = LiveResponse
    let count: Int
    let interval: Int
    var path: String { "/sse" }
    var query: Parameters? { ["count": count, "interval_ms": interval, "stamp": 1, "retry": 0] }
}
struct Stamp: Decodable { let t: UInt64 }

print(
    "Latency: \(latencyEvents) events, one every \(intervalMilliseconds) ms, from the embedded server in a child "
        + "process to the loop of `Client.events(_:)`; the server stamps each event with CLOCK_MONOTONIC just before "
        + "its flush. "
        + (pins.map { "Client pinned to CPU \($0.client), server to CPU \($0.server)." }
            ?? "Not pinned (fewer than two CPUs, or no taskset)."))
print("")
print("| transport | p50 | p90 | p99 | max |")
print("|---|---|---|---|---|")
let transports: [(String, any Transport)] = [
    ("AsyncHTTPClient", AsyncHTTPClientTransport()), ("URLSession", URLSessionTransport()),
]
for (name, transport) in transports {
    let client = Client(server: Server(baseURL: serverURL), transport: transport)
    var delays: [Double] = []
    // A warm-up stream (connection pool, code paths), then the measured one.
    for _ in 0..<2 {
        delays = []
        for try await event in client.events(Ticks(count: latencyEvents, interval: intervalMilliseconds)) {
            let now = monotonicNanoseconds()
            let stamp = try JSONDecoder().decode(Stamp.self, from: Data(event.data.utf8))
            delays.append(Double(Int64(bitPattern: now &- stamp.t)) / 1000)
        }
    }
    guard delays.count == latencyEvents else { throw BenchmarkError("\(name): \(delays.count) events") }
    let sorted = delays.sorted()
    func percentile(_ p: Double) -> String {
        format(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) + " µs"
    }
    print(
        "| \(name) | \(percentile(0.5)) | \(percentile(0.9)) | \(percentile(0.99)) | \(format(sorted.last ?? 0)) µs |")
}
try childInput.fileHandleForWriting.close()
child.waitUntilExit()
