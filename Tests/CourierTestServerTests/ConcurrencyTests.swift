import AsyncHTTPClient
import CourierTestServer
import NIOCore
import NIOHTTP1
import Testing

@Suite("concurrency and shutdown", .timeLimit(.minutes(2)))
struct ConcurrencyTests {
    @Test func twoHundredRequestsOverThirtyTwoTasks() async throws {
        try await withServer { server, client in
            let statuses = try await withThrowingTaskGroup(of: [Int].self) { group in
                for worker in 0..<32 {
                    group.addTask {
                        var statuses: [Int] = []
                        for index in stride(from: worker, to: 200, by: 32) {
                            let path = index.isMultiple(of: 2) ? "/get?i=\(index)" : "/anything/\(index)"
                            let method: HTTPMethod = index.isMultiple(of: 2) ? .GET : .POST
                            let response = try await client.fetch(server, path, method: method, body: [1, 2, 3])
                            statuses.append(response.status)
                        }
                        return statuses
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(statuses.count == 200)
            #expect(statuses.allSatisfy { $0 == 200 })
            #expect(server.requestCount == 200)
        }
    }

    @Test func shutdownWhileARequestIsStalledCompletes() async throws {
        let server = try await TestServer.start()
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: noRedirects)
        let request = HTTPClientRequest(url: "\(server.baseURL)/fault/stall-after-headers")
        let response = try await client.execute(request, timeout: .seconds(60))
        #expect(response.headers["Content-Length"] == ["100"])
        try await server.shutdown()
        await #expect(throws: (any Error).self) {
            _ = try await response.body.collect(upTo: 1024)
        }
        try await server.shutdown()
        try await client.shutdown()
    }

    @Test func startRefusesNonLoopbackHosts() async throws {
        await #expect(throws: TestServerError.nonLoopbackHost("0.0.0.0")) {
            try await TestServer.start(host: "0.0.0.0")
        }
    }
}
