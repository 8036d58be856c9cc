import Courier
import CourierOpenAPI
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

/// The same generated client against the real httpbin (`COURIER_HTTPBIN_URL`, started by `scripts/test`), on both
/// transports, for the routes httpbin has: JSON, form and multipart bodies, a query, an undocumented status, a
/// cacheable GET and a streamed download.
@Suite("CourierTransport: a generated client against httpbin", .timeLimit(.minutes(2)))
struct HTTPBinTests {
    @Test("a query and JSON, form and multipart bodies", arguments: TransportKind.all)
    func bodies(transport: TransportKind) async throws {
        let api = try generatedClient(makeCourier(transport, try HTTPBin.required()))

        try await Scenarios.echoesBodies(api)
    }

    @Test("an undocumented status reaches the generated code", arguments: TransportKind.all)
    func undocumented(transport: TransportKind) async throws {
        let api = try generatedClient(makeCourier(transport, try HTTPBin.required()))
        try await Scenarios.passesUndocumentedStatuses(api, [418])
    }

    @Test(
        "a cacheable GET, buffered or streamed, is a cache hit the second time",
        arguments: TransportKind.all, [["getCached"], []] as [Set<String>])
    func cacheHit(transport: TransportKind, buffered: Set<String>) async throws {
        let events = EventCapture()
        let courier = makeCourier(transport, try HTTPBin.required(), events: events) {
            $0.cache = HTTPCache.memory()
        }
        let api = try generatedClient(courier, configuration: .init(bufferedOperationIDs: buffered))
        let first = try await api.getCached(path: .init(seconds: 60)).ok.body.json
        let second = try await api.getCached(path: .init(seconds: 60)).ok.body.json
        #expect(first == second)
        let seen = await events.untilCallsEnded(2)
        #expect(seen.contains { if case .cached(.hit) = $0 { true } else { false } })
    }

    @Test("a download streams past the client's buffering limit", arguments: TransportKind.all)
    func download(transport: TransportKind) async throws {
        let courier = makeCourier(transport, try HTTPBin.required()) { $0.maxResponseBodySize = 16 * 1024 }
        let count = 100 * 1024  // httpbin's largest /stream-bytes
        let body = try await generatedClient(courier).downloadBytes(path: .init(count: count), query: .init(seed: 7))
            .ok.body.binary
        #expect(try await drain(body).bytes == count)
    }
}
