import Courier
import CourierAsyncHTTPClient
import CourierTestServer
import CourierURLSession
import Foundation
import Testing

/// A Courier transport under test, by name (so test output says which one failed).
struct TransportKind: Sendable, CustomTestStringConvertible, Hashable {
    let name: String
    let make: @Sendable () -> any Transport

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name }
    func hash(into hasher: inout Hasher) { hasher.combine(name) }
    var testDescription: String { name }

    static let asyncHTTPClient = TransportKind(name: "AsyncHTTPClient", make: { AsyncHTTPClientTransport() })
    static let urlSession = TransportKind(name: "URLSession", make: { URLSessionTransport() })

    /// Every transport the generated client runs on.
    static let all: [TransportKind] = [.asyncHTTPClient, .urlSession]
}

/// Runs `body` with a fresh embedded server, stopping it afterwards whatever happens.
func withTestServer<T>(_ body: (TestServer) async throws -> T) async throws -> T {
    let server = try await TestServer.start()
    do {
        let result = try await body(server)
        try await server.shutdown()
        return result
    } catch {
        try? await server.shutdown()
        throw error
    }
}

/// A Courier client for `baseURL` on `transport`, no retry backoff, its events captured.
func makeCourier(
    _ transport: TransportKind,
    _ baseURL: URL,
    events: EventCapture? = nil,
    configure: (inout CourierCore.Client.Configuration) -> Void = { _ in }
) -> CourierCore.Client {
    var configuration = CourierCore.Client.Configuration()
    configuration.retryPolicy = RetryPolicy(maxRetries: 2, backoff: .none)
    if let events { configuration.monitors.append(events) }
    configure(&configuration)
    return CourierCore.Client(
        server: Server(baseURL: baseURL), transport: transport.make(), configuration: configuration)
}

/// The real httpbin `scripts/test` started, if any.
enum HTTPBin {
    static let url: URL? = ProcessInfo.processInfo.environment["COURIER_HTTPBIN_URL"].flatMap(URL.init(string:))

    /// httpbin's URL; skips the test visibly without one, or fails it under `scripts/test` (`COURIER_REQUIRE_LABS=1`).
    static func required(sourceLocation: SourceLocation = #_sourceLocation) throws -> URL {
        if let url { return url }
        let reason = "no httpbin: COURIER_HTTPBIN_URL is not set (scripts/test starts one)"
        if ProcessInfo.processInfo.environment["COURIER_REQUIRE_LABS"] == "1" {
            Issue.record("\(reason), but scripts/test should have started it", sourceLocation: sourceLocation)
            throw LabMissing(reason: reason)
        }
        print("openapi: skipped \"\(Test.current?.name ?? "a test")\": \(reason)")
        try Test.cancel(Comment(rawValue: reason), sourceLocation: sourceLocation)
    }
}

/// A lab that `scripts/test` should have started is missing.
struct LabMissing: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}
