// Streams a large body from the embedded server to a file through Courier, and prints the throughput.
// Run it under `/usr/bin/time -v` to read the peak RSS:
//
//     swift build -c release --package-path Benchmarks
//     /usr/bin/time -v Benchmarks/.build/release/courier-download --transport asynchttpclient --mib 1024
import Courier
import CourierAsyncHTTPClient
import CourierTestServer
import Foundation
import HTTPTypes

struct Download: Request {
    typealias Response = DownloadedFile
    let bytes: Int
    let destination: URL
    var path: String { "/stream-bytes/\(bytes)" }
    var parser: any ResponseParser<DownloadedFile> { DownloadParser(destination: destination) }
}

func argument(_ name: String, default value: String) -> String {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), arguments.indices.contains(index + 1) else { return value }
    return arguments[index + 1]
}

let transportName = argument("--transport", default: "asynchttpclient")
let mebibytes = Int(argument("--mib", default: "1024")) ?? 1024
let transport: any Transport
switch transportName {
case "asynchttpclient":
    transport = AsyncHTTPClientTransport()
case "urlsession":
    transport = makeURLSessionTransport()
default:
    print("unknown transport \(transportName): use asynchttpclient or urlsession")
    exit(2)
}

let server = try await TestServer.start()
let client = Client(server: Server(baseURL: server.baseURL), transport: transport)
let destination = FileManager.default.temporaryDirectory.appendingPathComponent("courier-download-\(UUID())")
let start = ContinuousClock.now
let file = try await client.send(Download(bytes: mebibytes * 1024 * 1024, destination: destination))
let elapsed = ContinuousClock.now - start
try? FileManager.default.removeItem(at: destination)
try await server.shutdown()

let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
let rate = Double(file.byteCount) / 1_048_576 / seconds
print(
    "\(transportName): \(file.byteCount) bytes in \(String(format: "%.2f", seconds)) s, \(String(format: "%.0f", rate)) MiB/s"
)
