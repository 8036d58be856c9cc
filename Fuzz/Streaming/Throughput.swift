// Throughput of the streaming parsers in release mode: `scripts/fuzz-streaming throughput`. Not a test (timings
// depend on the machine); it prints MB/s and events/s for raw parsing, the async sequences and JSON decoding.
import Foundation

/// A chunked body in memory, as a transport would hand it out.
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

struct Delta: Decodable, Sendable {
    struct Choice: Decodable, Sendable {
        struct Content: Decodable, Sendable { var content: String }
        var index: Int
        var delta: Content
    }
    var id: String
    var object: String
    var choices: [Choice]
}

@main
enum Throughput {
    static func main() async throws {
        let eventCount = 200_000
        var stream = ""
        for number in 0..<eventCount {
            stream += "id: \(number)\nevent: delta\n"
            stream += #"data: {"id":"chatcmpl-\#(number)","object":"chat.completion.chunk","#
            stream += #""choices":[{"index":0,"delta":{"content":" token \#(number % 97)"}}]}"# + "\n\n"
            if number % 50 == 0 { stream += ": keep-alive\n\n" }
        }
        let bytes = Array(stream.utf8)
        let chunkSize = 16 * 1024
        let chunks = stride(from: 0, to: bytes.count, by: chunkSize).map {
            bytes[$0..<min($0 + chunkSize, bytes.count)]
        }
        let megabytes = Double(bytes.count) / 1_000_000
        print("stream: \(eventCount) events, \(String(format: "%.1f", megabytes)) MB in \(chunks.count) chunks")

        try await measure("EventStreamParser.parse(_:into:)", megabytes: megabytes, events: eventCount) {
            var parser = EventStreamParser()
            var count = 0
            for chunk in chunks { try parser.parse(chunk) { _ in count += 1 } }
            return count
        }
        try await measure("serverSentEvents()", megabytes: megabytes, events: eventCount) {
            var count = 0
            for try await _ in Chunks(chunks: chunks).serverSentEvents() { count += 1 }
            return count
        }
        try await measure("serverSentEvents(of: Delta.self)", megabytes: megabytes, events: eventCount) {
            var count = 0
            for try await _ in Chunks(chunks: chunks).serverSentEvents(of: Delta.self) { count += 1 }
            return count
        }

        var lines = ""
        for number in 0..<eventCount {
            lines += #"{"id":"chatcmpl-\#(number)","object":"chat.completion.chunk","#
            lines += #""choices":[{"index":0,"delta":{"content":" token \#(number % 97)"}}]}"# + "\n"
        }
        let lineBytes = Array(lines.utf8)
        let lineChunks = stride(from: 0, to: lineBytes.count, by: chunkSize).map {
            lineBytes[$0..<min($0 + chunkSize, lineBytes.count)]
        }
        let lineMegabytes = Double(lineBytes.count) / 1_000_000
        try await measure("LineSplitter (lines lent)", megabytes: lineMegabytes, events: eventCount) {
            var splitter = LineSplitter()
            var count = 0
            for chunk in lineChunks { try splitter.withLines(in: chunk) { _, _ in count += 1 } }
            return count
        }
        try await measure("jsonLines(of: Delta.self)", megabytes: lineMegabytes, events: eventCount) {
            var count = 0
            for try await _ in Chunks(chunks: lineChunks).jsonLines(of: Delta.self) { count += 1 }
            return count
        }
        let payloads = lineBytes.split(separator: 0x0A).map { Data($0) }
        try await measure("JSONDecoder alone (same payloads)", megabytes: lineMegabytes, events: eventCount) {
            let decoder = JSONDecoder()
            for payload in payloads { _ = try decoder.decode(Delta.self, from: payload) }
            return payloads.count
        }
    }

    /// Runs `body` five times and prints the best rate; `body` returns how many events it saw.
    static func measure(
        _ name: String,
        megabytes: Double,
        events: Int,
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> Int
    ) async throws {
        let clock = ContinuousClock()
        var best = Duration.seconds(1_000)
        for _ in 0..<5 {
            var count = 0
            let elapsed = try await clock.measure { count = try await body() }
            precondition(count == events, "\(name): \(count) events, expected \(events)")
            best = min(best, elapsed)
        }
        report(name, best, megabytes: megabytes, events: events)
    }

    static func report(_ name: String, _ elapsed: Duration, megabytes: Double, events: Int) {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = String(format: "%8.1f MB/s %10.0f events/s", megabytes / seconds, Double(events) / seconds)
        print("\(name.padding(toLength: 36, withPad: " ", startingAt: 0)) \(rate)")
    }
}
