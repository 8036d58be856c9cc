// Streams a large body between the embedded server and a file, through Courier or raw AsyncHTTPClient, and prints
// the throughput and this process's peak RSS (the in-process server included):
//
//     swift build -c release --package-path Benchmarks
//     Benchmarks/.build/release/courier-download --transport asynchttpclient --mib 1024
//     Benchmarks/.build/release/courier-download --upload --transport raw-ahc --mib 1024
//     Benchmarks/.build/release/courier-download --transport openapi-courier --mib 1024
//
// `openapi-courier` and `openapi-ahc` (downloads only) run the code swift-openapi-generator emits for the download
// on CourierOpenAPI's `CourierTransport` (over Courier's AsyncHTTPClient transport) and on
// swift-openapi-async-http-client's transport. `raw-urlsession` (downloads only) is URLSession with a plain delegate,
// the baseline of Courier's URLSession transport.
//
// One transfer per process, so each peak RSS is that transfer's own; `Benchmarks/run` interleaves the processes
// and takes medians. Besides the human line on stderr, stdout gets one tab-separated `RESULT` line:
// direction, transport, bytes, seconds, MiB/s, peak RSS in KiB.
import Courier
import CourierAsyncHTTPClient
import CourierOpenAPI
import CourierTestServer
import Foundation
import HTTPTypes
import OpenAPIAsyncHTTPClient

/// `GET /stream-bytes/{n}` written to `destination` by Courier's `DownloadParser` (which `fsync`s at the end).
struct Download: Request {
    typealias Response = DownloadedFile
    let bytes: Int
    let destination: URL
    var path: String { "/stream-bytes/\(bytes)" }
    var parser: any ResponseParser<DownloadedFile> { DownloadParser(destination: destination) }
}

/// `POST /upload` with a file body streamed from disk; the server answers with the number of bytes it counted.
struct Upload: Request {
    /// The embedded server's answer: `{"bytes": n}`.
    struct Counted: Decodable, Sendable {
        let bytes: Int64
    }

    typealias Response = Counted
    let source: URL
    var method: HTTPRequest.Method { .post }
    var path: String { "/upload" }
    var body: RequestBody? { .file(source) }
}

/// The byte count did not match: the transfer is not measured.
struct ShortTransfer: Error, CustomStringConvertible {
    let expected: Int64
    let actual: Int64
    var description: String { "transferred \(actual) bytes, expected \(expected)" }
}

func argument(_ name: String, default value: String) -> String {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), arguments.indices.contains(index + 1) else { return value }
    return arguments[index + 1]
}

/// This process's peak RSS in KiB (`VmHWM`), or 0 where `/proc` is not available.
func peakRSSKiB() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) } ?? 0
    }
    return 0
}

/// Writes `bytes` pseudo-random bytes to a new temporary file, 1 MiB at a time.
func makeSourceFile(bytes: Int) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-upload-\(UUID())")
    guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
        throw CocoaError(.fileWriteUnknown)
    }
    let handle = try FileHandle(forWritingTo: url)
    defer { try? handle.close() }
    var generator = SystemRandomNumberGenerator()
    let block = Data((0..<1_048_576).map { _ in UInt8.random(in: 0...255, using: &generator) })
    var remaining = bytes
    while remaining > 0 {
        let count = min(remaining, block.count)
        try handle.write(contentsOf: block.prefix(count))
        remaining -= count
    }
    return url
}

let transportName = argument("--transport", default: "asynchttpclient")
let mebibytes = Int(argument("--mib", default: "1024")) ?? 1024
let upload = CommandLine.arguments.contains("--upload")
let byteCount = mebibytes * 1024 * 1024
let openAPITransports = ["openapi-courier", "openapi-ahc"]
guard
    ["asynchttpclient", "urlsession", "raw-ahc"].contains(transportName)
        || ((openAPITransports + ["raw-urlsession"]).contains(transportName) && !upload)
else {
    print(
        "unknown transport \(transportName): use asynchttpclient, urlsession or raw-ahc (or, to download, "
            + "raw-urlsession, openapi-courier or openapi-ahc)")
    exit(2)
}

let server = try await TestServer.start()
let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("courier-download-\(UUID())")
let source = try upload ? makeSourceFile(bytes: byteCount) : nil
let start = ContinuousClock.now
var transferred: Int64 = 0
do {
    if transportName == "raw-ahc" {
        let raw = RawAHCStreaming(baseURL: server.baseURL)
        do {
            if let source {
                transferred = try await raw.upload(from: source, bytes: Int64(byteCount))
            } else {
                transferred = try await raw.download(bytes: byteCount, to: scratch)
            }
        } catch {
            await raw.shutdown()
            throw error
        }
        await raw.shutdown()
    } else if transportName == "raw-urlsession" {
        transferred = try await RawURLSessionDownload().download(from: server.baseURL, bytes: byteCount, to: scratch)
    } else if transportName == "openapi-ahc" {
        transferred = try await openAPIDownload(
            over: OpenAPIAsyncHTTPClient.AsyncHTTPClientTransport(), baseURL: server.baseURL, bytes: byteCount,
            to: scratch)
    } else if transportName == "openapi-courier" {
        let courier = Client(server: Server(baseURL: server.baseURL), transport: AsyncHTTPClientTransport())
        transferred = try await openAPIDownload(
            over: CourierTransport(client: courier), baseURL: server.baseURL, bytes: byteCount, to: scratch)
    } else {
        let transport: any Transport =
            transportName == "urlsession" ? makeURLSessionTransport() : AsyncHTTPClientTransport()
        let client = Client(server: Server(baseURL: server.baseURL), transport: transport)
        if let source {
            transferred = try await client.send(Upload(source: source)).bytes
        } else {
            transferred = try await client.send(Download(bytes: byteCount, destination: scratch)).byteCount
        }
    }
    guard transferred == Int64(byteCount) else { throw ShortTransfer(expected: Int64(byteCount), actual: transferred) }
} catch {
    FileHandle.standardError.write(Data("courier-download: \(transportName) failed: \(error)\n".utf8))
    try? FileManager.default.removeItem(at: scratch)
    if let source { try? FileManager.default.removeItem(at: source) }
    try await server.shutdown()
    exit(1)
}
let elapsed = ContinuousClock.now - start
let peak = peakRSSKiB()
try? FileManager.default.removeItem(at: scratch)
if let source { try? FileManager.default.removeItem(at: source) }
try await server.shutdown()

let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
let rate = Double(transferred) / 1_048_576 / seconds
let direction = upload ? "upload" : "download"
FileHandle.standardError.write(
    Data(
        ("\(direction) \(transportName): \(transferred) bytes in \(String(format: "%.2f", seconds)) s, "
            + "\(String(format: "%.0f", rate)) MiB/s, peak RSS \(String(format: "%.1f", Double(peak) / 1024)) MiB\n")
            .utf8))
print(
    [
        "RESULT", direction, transportName, "\(transferred)", String(format: "%.3f", seconds),
        String(format: "%.1f", rate),
        "\(peak)",
    ].joined(separator: "\t"))
