import Courier
import Foundation
import HTTPTypes
import Testing

/// Event streams from a real Server-Sent Events server nobody here wrote (`scripts/sse-lab`: sse-starlette on
/// uvicorn, at `COURIER_SSE_URL`), on every transport: its CRLF line ends, multi-line data, comments and non-ASCII
/// data; its `: ping` heartbeats inside a short idle timeout; and resuming with `Last-Event-ID` after uvicorn cuts a
/// stream, until its 204.
extension Conformance {
    @Suite("Conformance: a real SSE server (sse-starlette)", .timeLimit(.minutes(2)))
    struct SSELabConformanceTests {
        typealias Stream = LiveResponseConformanceTests.Stream

        struct Count: Request {
            struct Response: Decodable, Sendable { let ticks: Int }
            var path: String { "/test/count" }
        }

        struct Tick: Decodable, Sendable, Equatable { let n: Int }

        static let url = ProcessInfo.processInfo.environment["COURIER_SSE_URL"].flatMap(URL.init(string:))

        static func lab(_ function: String = #function) throws -> URL {
            guard let url else {
                try skipCase("\(function): no SSE lab (COURIER_SSE_URL; scripts/test starts one with scripts/sse-lab)")
            }
            return url
        }

        @Test(
            "CRLF line ends, multi-line data, a comment, non-ASCII data, as sse-starlette writes them",
            arguments: TransportKind.all)
        func encoding(transport: TransportKind) async throws {
            let client = makeClient(transport, try Self.lab())
            var events: [ServerSentEvent] = []
            for try await event in try await client.send(Stream(path: "/mixed")).serverSentEvents() {
                events.append(event)
            }
            #expect(events.map(\.type) == ["multi", "unicode", "message"])
            #expect(events.map(\.id) == ["m1", "m2", "m2"], "the last event ID carries over")
            #expect(events.map(\.data) == ["first line\nsecond line\nthird line", "héllo wörld ✓ 😀", "only data"])
        }

        @Test(
            "a stream uvicorn cuts resumes with Last-Event-ID: every event once, in order, until the 204",
            arguments: TransportKind.all)
        func resumes(transport: TransportKind) async throws {
            let client = makeClient(transport, try Self.lab())
            let before = try await client.send(Count()).ticks
            var ticks: [Tick] = []
            let source = client.events(Stream(path: "/ticks", query: ["count": 7, "drop_after": 3, "retry": 20]))
            for try await event in source {
                ticks.append(try JSONDecoder().decode(Tick.self, from: Data(event.data.utf8)))
            }
            let requests = try await client.send(Count()).ticks - before
            #expect(ticks == (0..<7).map(Tick.init))
            // 0-2 cut, 3-5 cut, 6 and the end, 204; AsyncHTTPClient may lose the last parts before a cut (one more).
            let expected = transport == .asyncHTTPClient ? 4...6 : 4...4
            #expect(expected.contains(requests), "\(requests) requests")
        }

        @Test("sse-starlette's ping comments keep a quiet stream inside the idle timeout", arguments: TransportKind.all)
        func pings(transport: TransportKind) async throws {
            let client = Client(
                server: Server(baseURL: try Self.lab()),
                transport: transport.makeWithTimeouts(.seconds(5), .seconds(1)))
            var ids: [String?] = []
            // Events 1.5 s apart, past the idle timeout; a ping every 100 ms leaves room for a 0.9 s stall.
            let query: Parameters = ["count": 3, "interval_ms": 1500, "ping_ms": 100]
            for try await event in client.events(Stream(path: "/ticks", query: query), reconnect: .disabled) {
                ids.append(event.id)
            }
            #expect(ids == ["0", "1", "2"])
        }
    }
}
