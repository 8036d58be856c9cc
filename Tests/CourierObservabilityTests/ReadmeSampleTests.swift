import Courier
import CourierObservability
import CourierTesting
import Foundation
import HTTPTypes
import Logging
import Testing

/// The README's "Logging, metrics and tracing" sample compiles and is what the README shows.
@Suite("README: logging, metrics and tracing")
struct ReadmeSampleTests {
    func sample(logger: Logger, server: Server, transport: any Transport) -> (Client, ActivityTracker) {
        // readme-observability:begin
        let activity = ActivityTracker()  // calls in flight, for a network-activity indicator
        var configuration = Client.Configuration(logger: logger, activity: activity)  // one line per call, at debug
        configuration.callLogLevel = .info  // to see every call in production logs (failures: failureLogLevel)
        configuration.monitors.append(MetricsMonitor())  // swift-metrics, MetricsSystem.factory
        configuration.addTracing(TracingMonitor())  // swift-distributed-tracing: spans + W3C traceparent
        configuration.monitors.append(.custom { event in print(event) })  // your own EventMonitor
        let client = Client(server: server, transport: transport, configuration: configuration)
        // readme-observability:end
        return (client, activity)
    }

    @Test("the sample's client sends, with three monitors and the tracing adapter")
    func sampleRuns() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/probe", with: .text("ok"))
        let logs = LogCapture()
        let (client, activity) = sample(
            logger: logs.logger(level: .info), server: Server(baseURL: URL(string: "https://api.example.com")!),
            transport: mock)
        #expect(try await client.send(Call()) == "ok")
        #expect(client.configuration.monitors.count == 3)
        #expect(client.configuration.adapters.last?.name == "traceContext")
        #expect(activity.inFlight == 0)
        #expect(logs.allText.count == 1)
    }

    @Test("the README shows the same code as this test")
    func readmeMatchesThisFile() throws {
        let testFile = URL(fileURLWithPath: #filePath)
        let root = testFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: testFile, encoding: .utf8)
        let readmeLines = try Self.lines(
            between: "<!-- readme-observability:begin -->", and: "<!-- readme-observability:end -->", in: readme
        ).filter { !$0.hasPrefix("```") }
        let sourceLines = try Self.lines(
            between: "// readme-observability:begin", and: "// readme-observability:end", in: source)
        #expect(!readmeLines.isEmpty)
        #expect(readmeLines == sourceLines)
    }

    /// The non-empty lines between two markers, trimmed.
    static func lines(between begin: String, and end: String, in text: String) throws -> [String] {
        let all = text.components(separatedBy: "\n")
        let start = try #require(all.firstIndex { $0.hasSuffix(begin) })
        let stop = try #require(all.firstIndex { $0.hasSuffix(end) })
        return all[(start + 1)..<stop].map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
