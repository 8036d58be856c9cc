import Courier
import Foundation
import Testing

/// The README's first call: the same lines as `FirstCallSample.swift`, compiled there and run against the real httpbin of `scripts/test`.
@Suite("README: a first call")
struct FirstCallSampleTests {
    @Test("the first call in the README runs against a real httpbin")
    func firstCallRuns() async throws {
        guard let url = HTTPBin.url else { try skipCase("no httpbin: COURIER_HTTPBIN_URL is not set") }
        let answer = try await firstCall(url)
        #expect(answer.hasPrefix("127.0.0.1 "), "\(answer)")
        #expect(answer.hasSuffix(" \(url.host ?? ""):\(url.port ?? 0)"), "\(answer)")
    }

    @Test("with the default traits, Client(baseURL:) and Client(server:) send through AsyncHTTPClient")
    func defaultTransportIsAsyncHTTPClient() throws {
        let url = try #require(URL(string: "http://127.0.0.1:1"))
        let first = Client(baseURL: url)
        let second = Client(server: Server(baseURL: url, environment: .staging))
        #expect(first.transport is AsyncHTTPClientTransport)
        #expect(second.transport is AsyncHTTPClientTransport)
        #expect(Client.defaultTransport is AsyncHTTPClientTransport)
        #expect(second.environment == .staging)
    }

    @Test("the README shows the same lines as this file")
    func readmeMatchesThisFile() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let root = directory.deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(
            contentsOf: directory.appendingPathComponent("FirstCallSample.swift"), encoding: .utf8)
        let shown = try Self.lines(
            between: "<!-- readme-first-call:begin -->", and: "<!-- readme-first-call:end -->", in: readme)
        let compiled = try Self.lines(
            between: "// readme-first-call:begin", and: "// readme-first-call:end", in: source)
        #expect(shown.filter { !$0.hasPrefix("```") } == compiled)
    }

    private static func lines(between begin: String, and end: String, in text: String) throws -> [String] {
        let all = text.components(separatedBy: "\n")
        let start = try #require(all.firstIndex { $0.contains(begin) })
        let stop = try #require(all.firstIndex { $0.contains(end) })
        return all[(start + 1)..<stop].map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
