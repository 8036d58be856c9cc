import Courier
import CourierTestServer
import Foundation
import HTTPTypes
import Testing

/// Event streams where they get hard, on every transport: a giant event, a slow drip, a quiet stream kept alive by
/// heartbeats (and one that is not), and a long stream whose connection drops a thousand times.
extension Conformance {
    @Suite("Conformance: event streams under stress", .timeLimit(.minutes(3)))
    struct EventStreamConformanceTests {
        typealias Stream = LiveResponseConformanceTests.Stream

        struct Padded: Decodable, Sendable {
            let n: Int
            let pad: String
        }

        /// A client whose transport gives up when no byte arrives for `idleTimeout`.
        static func client(_ transport: TransportKind, _ server: TestServer, idleTimeout: Duration) -> Client {
            Client(
                server: Server(baseURL: server.baseURL), transport: transport.makeWithTimeouts(.seconds(5), idleTimeout)
            )
        }

        @Test(
            "a 4 MiB event arrives whole; over maximumEventSize it fails typed, without a reconnect",
            arguments: TransportKind.all)
        func giantEvent(transport: TransportKind) async throws {
            try await withTestServer { server in
                let client = makeClient(transport, server.baseURL)
                let size = 4 << 20
                let live = try await client.send(Stream(path: "/sse", query: ["count": 2, "size": size]))
                var pads: [Int] = []
                for try await event in live.serverSentEvents(of: Padded.self) {
                    #expect(event.data.pad.allSatisfy { $0 == "x" })
                    pads.append(event.data.pad.utf8.count)
                }
                #expect(pads == [size, size])

                let before = server.requestCount
                let limits = StreamLimits(maximumEventSize: 1 << 20)
                let source = client.events(Stream(path: "/sse", query: ["count": 2, "size": size]), limits: limits)
                let error = await expectCourierError {
                    for try await _ in source {}
                }
                #expect(error?.code == .eventTooLarge)
                #expect(error?.message?.contains("maximumEventSize (1048576 bytes)") == true)
                #expect(server.requestCount - before == 1, "a limit is not a reason to reconnect")
            }
        }

        struct Limited: Request {
            typealias Response = LiveResponse
            var path: String { "/sse" }
            var query: Parameters? { ["count": 20] }
            var maxResponseBodySize: Int? { 200 }
        }

        @Test("a request's own maxResponseBodySize bounds the whole stream", arguments: TransportKind.all)
        func bodyLimit(transport: TransportKind) async throws {
            try await withTestServer { server in
                let client = makeClient(transport, server.baseURL)
                var ids: [String?] = []
                let live = try await client.send(Limited())
                let error = await expectCourierError {
                    for try await event in live.serverSentEvents() { ids.append(event.id) }
                }
                #expect(error?.code == .bodyTooLarge)
                #expect(error?.message?.contains("maxResponseBodySize (200 bytes)") == true)
                // 33 bytes per event: the events wholly within the first 200 bytes (or fewer, by chunking).
                #expect(ids.count <= 6 && ids == (0..<ids.count).map { String($0) })
            }
        }

        @Test("a slow drip, one byte per chunk, gives the same events", arguments: TransportKind.all)
        func slowDrip(transport: TransportKind) async throws {
            try await withTestServer { server in
                let client = makeClient(transport, server.baseURL)
                var events: [ServerSentEvent] = []
                let live = try await client.send(Stream(path: "/sse", query: ["count": 3, "drip_ms": 1]))
                for try await event in live.serverSentEvents() { events.append(event) }
                #expect(events.map(\.id) == ["0", "1", "2"])
                #expect(events.map(\.type) == ["tick", "tick", "tick"])
                #expect(events.map(\.data) == [#"{"n":0}"#, #"{"n":1}"#, #"{"n":2}"#])
            }
        }

        @Test("heartbeats keep a quiet stream inside the idle timeout", arguments: TransportKind.all)
        func heartbeatsKeepAlive(transport: TransportKind) async throws {
            try await withTestServer { server in
                let client = Self.client(transport, server, idleTimeout: .seconds(1))
                // 1.5 s between events, past the idle timeout; a comment every 100 ms. The heartbeats come from the
                // test server's tasks, on the test process's busy threads: the margin allows a 0.9 s stall.
                let query: Parameters = ["count": 3, "interval_ms": 1500, "heartbeat_ms": 100]
                let before = server.requestCount
                var ids: [String?] = []
                for try await event in client.events(Stream(path: "/sse", query: query), reconnect: .disabled) {
                    ids.append(event.id)
                }
                #expect(ids == ["0", "1", "2"])
                #expect(server.requestCount - before == 1, "no idle timeout, so no reconnect")
            }
        }

        @Test(
            "without heartbeats the idle timeout fires; an event source reconnects and resumes",
            arguments: TransportKind.all)
        func idleTimeout(transport: TransportKind) async throws {
            try await withTestServer { server in
                let client = Self.client(transport, server, idleTimeout: .milliseconds(300))
                // Events 2 s apart: a timer late by a loaded machine's scheduling still fires before the next one.
                let query: Parameters = ["count": 3, "interval_ms": 2000, "retry": 0]
                let live = try await client.send(Stream(path: "/sse", query: query))
                var iterator = live.makeAsyncIterator()
                let error = await expectCourierError {
                    while try await iterator.next() != nil {}
                }
                #expect(error?.code == .idleTimeout)

                let before = server.requestCount
                var ids: [String?] = []
                for try await event in client.events(Stream(path: "/sse", query: query)) { ids.append(event.id) }
                #expect(ids == ["0", "1", "2"])
                // Each connection gives one event, then stays quiet past the idle timeout: 0, 1, 2, then a 204.
                #expect(server.requestCount - before == 4)
            }
        }

        @Test(
            "a 2xx other than 200 (202, 206) fails the stream with unexpectedResponse, without a reconnect",
            arguments: TransportKind.all, [202, 206])
        func statusOtherThan200(transport: TransportKind, status: Int) async throws {
            try await withTestServer { server in
                let client = makeClient(transport, server.baseURL)
                let before = server.requestCount
                var delivered = 0
                let started = ContinuousClock.now
                let error = await expectCourierError {
                    // The server sends three events under that status, then ends the body: a client that took it for
                    // a stream would deliver them and reconnect every 0 ms until its budget.
                    let query: Parameters = ["status": status, "count": 3, "retry": 0]
                    for try await _ in client.events(Stream(path: "/sse", query: query)) { delivered += 1 }
                }
                #expect(error?.code == .unexpectedResponse)
                #expect(error?.message?.contains("\(status), not 200") == true, "\(String(describing: error))")
                #expect(delivered == 0)
                #expect(server.requestCount - before == 1, "no reconnect")
                // Not the reconnect budget's 10 pauses: one exchange on the loopback.
                #expect(ContinuousClock.now - started < .seconds(5))
            }
        }

        @Test(
            "cancelAll(tagged:) ends a stream while it reads: CancellationError at once, no reconnect",
            arguments: TransportKind.all)
        func cancelAllWhileReading(transport: TransportKind) async throws {
            try await withTestServer { server in
                let client = makeClient(transport, server.baseURL)
                let before = server.requestCount
                // One event, then 10 s of silence: the reader waits inside the body when it is cancelled.
                let query: Parameters = ["count": 100, "interval_ms": 10_000]
                let (firstEvent, signal) = AsyncStream.makeStream(of: Void.self)
                let reader = Task {
                    var events = 0
                    for try await _ in client.events(Stream(path: "/sse", query: query), tags: ["screen"]) {
                        events += 1
                        signal.yield()
                    }
                    return events
                }
                var signals = firstEvent.makeAsyncIterator()
                _ = await signals.next()
                #expect(client.cancelAll(tagged: "other") == 0)
                let started = ContinuousClock.now
                #expect(client.cancelAll(tagged: "screen") == 1, "the stream is one entry")
                await #expect(throws: CancellationError.self) { try await reader.value }
                // The next event is 10 s away: without the cancellation the reader would still be waiting for it.
                #expect(ContinuousClock.now - started < .seconds(5))
                #expect(server.requestCount - before == 1, "no reconnect after the cancellation")
                #expect(client.callsInFlight == 0)
            }
        }

        @Test(
            "cancelAll() ends a stream while it waits to reconnect: CancellationError at once, no reconnect",
            arguments: TransportKind.all)
        func cancelAllWhileWaitingToReconnect(transport: TransportKind) async throws {
            try await withTestServer { server in
                let (reconnecting, signal) = AsyncStream.makeStream(of: Void.self)
                var configuration = Client.Configuration()
                configuration.monitors = [
                    ClosureMonitor { event in
                        if case .reconnecting = event.kind { signal.yield() }
                    }
                ]
                let client = Client(
                    server: Server(baseURL: server.baseURL), transport: transport.make(), configuration: configuration)
                let before = server.requestCount
                // One event, then the connection drops, and the server asked for 30 s between reconnects.
                let query: Parameters = ["count": 5, "drop_after": 1, "retry": 30_000]
                let reader = Task {
                    for try await _ in client.events(Stream(path: "/sse", query: query)) {}
                }
                var signals = reconnecting.makeAsyncIterator()
                _ = await signals.next()
                let started = ContinuousClock.now
                #expect(client.cancelAll() == 1)
                await #expect(throws: CancellationError.self) { try await reader.value }
                #expect(ContinuousClock.now - started < .seconds(5), "the 30 s pause was not cut short")
                #expect(server.requestCount - before == 1, "no reconnect after the cancellation")
            }
        }

        @Test(
            "100,000 events through 1,000 dropped connections: every event once, in order",
            arguments: TransportKind.all)
        func thousandDrops(transport: TransportKind) async throws {
            try await withTestServer { server in
                let client = makeClient(transport, server.baseURL)
                let total = 100_000
                // Each connection sends 100 events, 10 per chunk (the first a replay of one already delivered),
                // then half of the next one, and is cut.
                let query: Parameters = [
                    "count": total, "drop_after": 100, "replay": 1, "partial": 1, "batch": 10, "retry": 0,
                ]
                let before = server.requestCount
                var expected = 0
                var wrong = 0
                for try await event in client.events(Stream(path: "/sse", query: query)) {
                    // A half event dispatched would have no data and break the JSON.
                    if event.id != String(expected) || event.data != "{\"n\":\(expected)}" { wrong += 1 }
                    expected = (event.id.flatMap { Int($0) } ?? expected) + 1
                }
                let connections = server.requestCount - before
                print("\(transport.name): \(expected) events over \(connections) connections")
                #expect(expected == total)
                #expect(wrong == 0, "every event once, whole, in order")
                #expect(connections >= 1_000, "\(connections) connections")
            }
        }
    }
}
