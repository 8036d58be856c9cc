import Courier
import CourierTestServer
import Foundation
import HTTPTypes
import Testing

/// Parks the embedded server's handlers until the test releases them, and counts how many were parked at once.
private actor ServerGate {
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private(set) var maxParked = 0
    private var arrivals: [CheckedContinuation<Void, Never>] = []
    private var arrived = 0
    private var seen = 0

    /// Parks a handler until ``releaseOne()`` or ``releaseAll()``.
    func enter() async {
        await withCheckedContinuation { continuation in
            waiters.append(continuation)
            maxParked = max(maxParked, waiters.count)
            arrived += 1
            if !arrivals.isEmpty { arrivals.removeFirst().resume() }
        }
    }

    /// Waits until one more handler than before has arrived.
    func nextArrival() async {
        if arrived > seen {
            seen += 1
            return
        }
        await withCheckedContinuation { arrivals.append($0) }
        seen += 1
    }

    var parked: Int { waiters.count }

    func releaseOne() {
        if !waiters.isEmpty { waiters.removeFirst().resume() }
    }

    func releaseAll() {
        for waiter in waiters { waiter.resume() }
        waiters.removeAll()
    }
}

extension Conformance {
    /// Groups, cancellation and pagination on the wire.
    @Suite("Conformance: jobs", .timeLimit(.minutes(2)))
    struct JobsConformanceTests {
        @Test(
            "a grouped job of 10 GETs returns every echo in input order", arguments: TransportKind.all, ServerKind.all)
        func groupInOrder(transport: TransportKind, server: ServerKind) async throws {
            try await server.withBaseURL { baseURL in
                let client = makeClient(transport, baseURL)
                let requests = (0..<10).map { HTTPBinCall<Echo>(path: "/get", query: ["n": "\($0)"]) }
                let echoes = try await client.sendAll(requests, maxConcurrent: 3)
                #expect(echoes.map { $0.args["n"] } == (0..<10).map { "\($0)" })
                #expect(client.callsInFlight == 0)
            }
        }

        @Test("the server never sees more than maxConcurrent calls of a group at once", arguments: TransportKind.all)
        func concurrencyOnTheWire(transport: TransportKind) async throws {
            let server = try await TestServer.start()
            let gate = ServerGate()
            server.register("GET", "/parked") { _ in
                await gate.enter()
                return .text("ok")
            }
            let client = makeClient(transport, server.baseURL)
            let count = 10
            let limit = 3
            async let values = client.sendAll(
                (0..<count).map { Parked(n: $0) }, maxConcurrent: limit)
            var released = 0
            var arrived = 0
            while released < count {
                while arrived - released < min(limit, count - released) {
                    await gate.nextArrival()
                    arrived += 1
                }
                await gate.releaseOne()
                released += 1
            }
            #expect(try await values.count == count)
            #expect(await gate.maxParked == limit)
            try await server.shutdown()
        }

        @Test("cancelAll(tagged:) ends a group's calls on the wire promptly", arguments: TransportKind.all)
        func cancelOnTheWire(transport: TransportKind) async throws {
            let server = try await TestServer.start()
            let gate = ServerGate()
            server.register("GET", "/parked") { _ in
                await gate.enter()
                return .text("late")
            }
            let client = makeClient(transport, server.baseURL)
            let group = Task {
                try await client.sendAll(
                    (0..<6).map { Parked(n: $0) }, maxConcurrent: 3, tags: ["batch"])
            }
            for _ in 0..<3 { await gate.nextArrival() }
            let start = ContinuousClock.now
            #expect(client.cancelAll(tagged: "batch") == 1)
            await #expect(throws: CancellationError.self) { try await group.value }
            #expect(ContinuousClock.now - start < .seconds(5))
            #expect(client.callsInFlight == 0)
            #expect(server.requestCount == 3)
            await gate.releaseAll()
            try await server.shutdown()
        }

        @Test(
            "pages linked by a Link header (relative and absolute) are followed to the end",
            arguments: TransportKind.all)
        func linkPagination(transport: TransportKind) async throws {
            let server = try await TestServer.start()
            let base = server.baseURL.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
            server.register("GET", "/numbers") { request in
                switch request.queryValue("page") ?? "1" {
                case "1":
                    TestServerResponse(
                        status: 200, headers: [("Link", #"</numbers?page=2>; rel="next""#)], body: Array("[1,2]".utf8))
                case "2":
                    TestServerResponse(
                        status: 200,
                        headers: [
                            ("Link", #"<\#(base)/numbers?page=1>; rel="first", <\#(base)/numbers?page=3>; rel=next"#)
                        ],
                        body: Array("[3,4]".utf8))
                default:
                    TestServerResponse(status: 200, body: Array("[5]".utf8))
                }
            }
            let client = makeClient(transport, server.baseURL)
            var values: [Int] = []
            for try await page in client.pages(of: HTTPBinCall<[Int]>(path: "/numbers"), next: .link()) {
                values += page.value
            }
            #expect(values == [1, 2, 3, 4, 5])
            #expect(server.requestCount == 3)
            try await server.shutdown()
        }
    }
}

/// A GET for `/parked?n=<n>` with a text response.
private struct Parked: Request {
    typealias Response = String
    let n: Int
    var path: String { "/parked" }
    var query: Parameters? { ["n": "\(n)"] }
}
