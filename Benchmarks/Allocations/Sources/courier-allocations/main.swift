// The allocation check: mallocs per call through Courier's default pipeline (redirect, retry, status validation,
// parse, the decision trace, a silent logger) on a transport that answers at once, so every allocation counted is
// Courier's own (and the Swift runtime's on its behalf). Counts are deterministic for a given binary; this fails
// (exit 1) when one grows past the budget committed in budget.tsv, and `--write-budget` records the current counts.
import Courier
import Foundation
import HTTPTypes
import MallocInterposerSwift

/// The ~100-byte JSON body the loopback benchmark serves.
struct TinyPayload: Decodable, Sendable {
    struct Owner: Decodable, Sendable {
        let login: String
        let id: Int
    }

    static let json =
        #"{"id":42,"name":"courier","active":true,"score":0.75,"tags":["http","swift"],"#
        + #""owner":{"login":"octocat","id":1}}"#

    let id: Int
    let name: String
    let active: Bool
    let score: Double
    let tags: [String]
    let owner: Owner
}

struct TinyDataRequest: Request {
    typealias Response = Data
    var path: String { "/tiny" }
}

struct TinyDecodedRequest: Request {
    typealias Response = TinyPayload
    var path: String { "/tiny" }
}

struct SearchRequest: Request {
    typealias Response = Data
    var path: String { "/search" }
    var query: Parameters? {
        ["q": "swift http client", "page": 3, "per_page": 50, "sort": "updated", "tags": ["nio", "async"]]
    }
}

struct CreateRequest: Request {
    struct Item: Encodable, Sendable {
        let name: String
        let count: Int
    }
    typealias Response = Data
    var method: HTTPRequest.Method { .post }
    var path: String { "/items" }
    var body: RequestBody? { .json(Item(name: "courier", count: 3)) }
}

/// `GET /tiny` as a live response, whose body the caller reads to its end.
struct TinyLiveRequest: Request {
    typealias Response = LiveResponse
    var path: String { "/tiny" }
}

/// Answers every request with the same 200 and JSON body, after reading (and dropping) the request's body.
struct FixedTransport: Transport {
    let head = HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"])
    let body = Array(TinyPayload.json.utf8)

    func send(_ request: OutgoingRequest, context: TransportContext) async throws -> TransportResponse {
        if let requestBody = request.body {
            for try await _ in requestBody {}
        }
        return TransportResponse(head: head, body: MessageBody(body))
    }
}

struct Scenario: Sendable {
    let name: String
    let call: @Sendable (Client) async throws -> Void
}

let decoder = JSONDecoder()
let tinyData = Data(TinyPayload.json.utf8)
let scenarios = [
    Scenario(name: "GET -> Data") { _ = try await $0.send(TinyDataRequest()) },
    Scenario(name: "GET -> JSON") { _ = try await $0.send(TinyDecodedRequest()) },
    Scenario(name: "GET 5-item query -> Data") { _ = try await $0.send(SearchRequest()) },
    Scenario(name: "POST JSON -> Data") { _ = try await $0.send(CreateRequest()) },
    Scenario(name: "GET -> LiveResponse, read") { client in
        for try await _ in try await client.send(TinyLiveRequest()) {}
    },
    // Not a call: the floor under "GET -> JSON", what Foundation's decoder allocates for the same body.
    Scenario(name: "JSONDecoder alone") { _ in _ = try decoder.decode(TinyPayload.self, from: tinyData) },
]

let budgetURL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("budget.tsv")
let writeBudget = CommandLine.arguments.contains("--write-budget")
/// `--only NAME` runs one scenario and `--iterations N` changes the count (for a profiler such as heaptrack);
/// `--time N` times N calls instead of counting allocations, `--cold N` times them with the caches flushed first.
func argument(after flag: String) -> String? {
    guard let index = CommandLine.arguments.firstIndex(of: flag), index + 1 < CommandLine.arguments.count else {
        return nil
    }
    return CommandLine.arguments[index + 1]
}
let iterations = argument(after: "--iterations").flatMap { Int($0) } ?? 2_000
let only = argument(after: "--only")

func readBudget() -> [String: Double] {
    guard let text = try? String(contentsOf: budgetURL, encoding: .utf8) else { return [:] }
    var budget: [String: Double] = [:]
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
        let fields = line.split(separator: "\t")
        if fields.count >= 2, let value = Double(fields[1]) { budget[String(fields[0])] = value }
    }
    return budget
}

guard let baseURL = URL(string: "https://api.example.com") else { exit(2) }
let client = Client(server: Server(baseURL: baseURL), transport: FixedTransport())
let budget = readBudget()
var measured: [(String, Double)] = []
var failed = false

/// The process's CPU time (user and system), in seconds.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
    return user + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

// `--cold N`: the CPU time of N calls per scenario with the data caches flushed before each one (a walk over
// `--kb K` KiB, 4,096 by default, which evicts the caches a call's data lives in), against the same walks without the
// calls, and against N calls back to back: what a call costs when it starts cold, as in a sequential client whose
// thread slept between two responses. A diagnostic for issue #17, like `--time`; never a check.
if let coldCalls = argument(after: "--cold").flatMap({ Int($0) }), coldCalls > 0 {
    let words = (argument(after: "--kb").flatMap { Int($0) } ?? 4_096) * 128
    let flusher = CacheFlusher(words: words)
    print(
        "# courier-allocations --cold: CPU per call with the data caches flushed (\(words / 128) KiB walked) "
            + "before each of \(coldCalls) calls")
    print("| scenario | round | flush alone µs | cold call µs | warm call µs |")
    print("|---|---|---|---|---|")
    for scenario in scenarios where only == nil || scenario.name == only {
        try await Task.detached { for _ in 0..<2_000 { try await scenario.call(client) } }.value
        var rounds: [(flush: Double, cold: Double, warm: Double)] = []
        for round in 1...5 {
            var before = cpuSeconds()
            await Task.detached { for _ in 0..<coldCalls { flusher.flush() } }.value
            let flushAlone = (cpuSeconds() - before) / Double(coldCalls) * 1e6
            before = cpuSeconds()
            try await Task.detached {
                for _ in 0..<coldCalls {
                    flusher.flush()
                    try await scenario.call(client)
                }
            }.value
            let flushAndCall = (cpuSeconds() - before) / Double(coldCalls) * 1e6
            before = cpuSeconds()
            try await Task.detached { for _ in 0..<coldCalls { try await scenario.call(client) } }.value
            let warm = (cpuSeconds() - before) / Double(coldCalls) * 1e6
            rounds.append((flushAlone, flushAndCall - flushAlone, warm))
            let cells = [flushAlone, flushAndCall - flushAlone, warm].map { String(format: "%.2f", $0) }
            print("| \(scenario.name) | \(round) | \(cells.joined(separator: " | ")) |")
        }
        let median = { (values: [Double]) in values.sorted()[values.count / 2] }
        let medians = [median(rounds.map(\.flush)), median(rounds.map(\.cold)), median(rounds.map(\.warm))]
        let cells = medians.map { String(format: "%.2f", $0) }
        print("| **\(scenario.name)** | median | \(cells.joined(separator: " | ")) |")
    }
    print("(checksum \(flusher.checksum % 10))")
    exit(0)
}

// `--time N`: instead of counting, the CPU time of N calls per scenario (after 2,000 unmeasured), in a detached
// task, so that no call hops to the main thread. A timing on a warm path, for comparing two builds run one after the
// other on the same pinned CPU (`taskset -c 0`); never a check: timings vary from run to run.
if let timedCalls = argument(after: "--time").flatMap({ Int($0) }), timedCalls > 0 {
    print("# courier-allocations --time: CPU per call on a transport that answers at once, \(timedCalls) calls each")
    for scenario in scenarios where only == nil || scenario.name == only {
        try await Task.detached { for _ in 0..<2_000 { try await scenario.call(client) } }.value
        let before = cpuSeconds()
        try await Task.detached { for _ in 0..<timedCalls { try await scenario.call(client) } }.value
        let perCall = (cpuSeconds() - before) / Double(timedCalls) * 1e6
        print("\(scenario.name): \(String(format: "%.2f", perCall)) µs")
    }
    exit(0)
}
print("# courier-allocations: mallocs per call on a transport that answers at once, \(iterations) calls each")
print("| scenario | mallocs/call | budget | |")
print("|---|---|---|---|")
for scenario in scenarios where only == nil || scenario.name == only {
    // Warm up: the runtime's one-time metadata and caches are not the call's.
    for _ in 0..<500 { try await scenario.call(client) }
    MallocInterposerSwift.initialize()
    MallocInterposerSwift.hook()
    for _ in 0..<iterations { try await scenario.call(client) }
    MallocInterposerSwift.unhook()
    let perCall = Double(MallocInterposerSwift.getStatistics().mallocCount) / Double(iterations)
    measured.append((scenario.name, perCall))
    let limit = budget[scenario.name]
    // Half an allocation of slack: a count that grows by one per call is a regression; rounding noise is not.
    let over = limit.map { perCall > $0 + 0.5 } ?? false
    failed = failed || over
    let verdict = limit == nil ? "no budget" : over ? "OVER BUDGET" : "ok"
    print("| \(scenario.name) | \(String(format: "%.2f", perCall)) | \(limit.map { "\($0)" } ?? "-") | \(verdict) |")
}

if measured.allSatisfy({ $0.1 < 1 }) {
    print("error: no allocation was counted: the malloc interposer is not loaded (see MallocInterposerSwift)")
    exit(1)
}
if writeBudget {
    var text = "# scenario\tmallocs per call (release build; courier-allocations --write-budget)\n"
    for (name, perCall) in measured { text += "\(name)\t\(Int(perCall.rounded()))\n" }
    try text.write(to: budgetURL, atomically: true, encoding: .utf8)
    print("wrote \(budgetURL.path)")
} else if failed {
    print("error: allocations per call grew past the committed budget (\(budgetURL.path))")
    exit(1)
}

/// A buffer larger than the caches, walked one cache line at a time: each walk evicts what a call left there.
///
/// `@unchecked Sendable` is sound: one task at a time uses it (each `--cold` measurement awaits the detached task that
/// walks it before the next starts).
final class CacheFlusher: @unchecked Sendable {
    private let words: UnsafeMutablePointer<UInt64>
    private let count: Int
    /// The sum of what the walks read, printed so that the walks cannot be optimized away.
    private(set) var checksum: UInt64 = 0

    init(words count: Int) {
        self.count = count
        words = UnsafeMutablePointer<UInt64>.allocate(capacity: count)
        words.initialize(repeating: 1, count: count)
    }

    /// Reads and writes one word of every 64-byte line.
    @inline(never)
    func flush() {
        var sum = checksum
        var index = 0
        while index < count {
            sum &+= words[index]
            words[index] = sum
            index += 8
        }
        checksum = sum
    }
}
