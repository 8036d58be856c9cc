// Latency of the HTTP cache against a network round trip on the embedded server (loopback, AsyncHTTPClient):
// median and p99 of a plain GET, a fresh hit from memory and from disk, and a 304 revalidation.
//
//     cd Benchmarks && swift build -c release --product courier-cache
//     .build/release/courier-cache --iterations 2000
import Courier
import CourierAsyncHTTPClient
import CourierTestServer
import Foundation

struct Get: Request {
    typealias Response = Data
    let path: String
}

func argument(_ name: String, default value: String) -> String {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), arguments.indices.contains(index + 1) else { return value }
    return arguments[index + 1]
}

/// Median and p99 of `iterations` sends of `path`, in microseconds, after a warm-up.
func measure(_ client: Client, _ path: String, iterations: Int) async throws -> (median: Double, p99: Double) {
    for _ in 0..<50 { _ = try await client.send(Get(path: path)) }
    var samples: [Double] = []
    samples.reserveCapacity(iterations)
    for _ in 0..<iterations {
        let start = ContinuousClock.now
        _ = try await client.send(Get(path: path))
        let elapsed = ContinuousClock.now - start
        samples.append(Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12)
    }
    samples.sort()
    return (samples[samples.count / 2], samples[min(samples.count - 1, Int(Double(samples.count) * 0.99))])
}

let iterations = Int(argument("--iterations", default: "2000")) ?? 2000
let server = try await TestServer.start()
let transport = AsyncHTTPClientTransport()
let base = Client(server: Server(baseURL: server.baseURL), transport: transport)
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-bench-\(UUID())")
let memory = base.configured { $0.cache = .memory() }
let disk = base.configured { $0.cache = try? HTTPCache(storage: .disk(directory: directory, byteLimit: 64 << 20)) }

let rows: [(String, Client, String)] = [
    ("network round trip (no cache)", base, "/cache/60"),
    ("network, /etag (no cache)", base, "/etag/bench"),
    ("fresh hit, memory", memory, "/cache/60"),
    ("fresh hit, disk", disk, "/cache/60"),
    ("304 revalidation, memory", memory, "/etag/bench"),
]
var results: [(String, (median: Double, p99: Double))] = []
for (name, client, path) in rows {
    results.append((name, try await measure(client, path, iterations: iterations)))
}
try? FileManager.default.removeItem(at: directory)
try await server.shutdown()

print("courier-cache: \(iterations) GETs each, embedded server on loopback, AsyncHTTPClient, release build")
let baseline = results[0].1.median
for (name, result) in results {
    let ratio = result.median / baseline
    print(
        name.padding(toLength: 32, withPad: " ", startingAt: 0)
            + String(
                format: "median %8.1f µs   p99 %8.1f µs   %5.2f× the round trip's median", result.median, result.p99,
                ratio)
    )
}
