import AsyncHTTPClient
import Courier
import CourierAsyncHTTPClient
import CourierTestServer
import Foundation
import Logging
import ServiceLifecycle
import Testing

/// `AsyncHTTPClientTransport(clientConfiguration:)`: your AsyncHTTPClient configuration, Courier's redirects, and a
/// client that shuts down with the app's `ServiceGroup`.
extension Conformance {
    @Suite("AsyncHTTPClient transport: your configuration, your lifecycle")
    struct ServiceLifecycleConformanceTests {
        @Test(
            "a transport from an HTTPClient.Configuration keeps Courier's redirects and shuts down with its ServiceGroup"
        )
        func ownedClientInAServiceGroup() async throws {
            try await withTestServer { server in
                // Redirects asked of AsyncHTTPClient are still Courier's (one more attempt in the trace).
                var configuration = HTTPClient.Configuration(redirectConfiguration: .follow(max: 5, allowCycles: false))
                configuration.httpVersion = .http1Only
                let transport = AsyncHTTPClientTransport(clientConfiguration: configuration)
                let client = Client(server: Server(baseURL: server.baseURL), transport: transport)
                let redirected = try await client.exchange(for: LifecycleCall(path: "/redirect/1"))
                #expect(redirected.attempts == 2, "AsyncHTTPClient followed the redirect itself")
                #expect(redirected.trace.description.contains("redirect"))

                let group = ServiceGroup(services: [transport], logger: Logger(label: "courier.tests.lifecycle"))
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    tasks.addTask { try await group.run() }
                    // The transport serves while the group runs...
                    _ = try await client.send(LifecycleCall(path: "/get"))
                    // ...and its client is shut down when the group shuts down gracefully.
                    await group.triggerGracefulShutdown()
                    try await tasks.waitForAll()
                }
                let before = server.requestCount
                let error = await expectCourierError { try await client.send(LifecycleCall(path: "/get")) }
                #expect(error != nil)
                #expect(server.requestCount == before, "a call went out after shutdown")
            }
        }

        @Test("shutdown() leaves the shared client of init(configuration:) alone")
        func sharedClientSurvivesShutdown() async throws {
            try await withTestServer { server in
                let transport = AsyncHTTPClientTransport()
                try await transport.shutdown()
                let client = Client(server: Server(baseURL: server.baseURL), transport: transport)
                _ = try await client.send(LifecycleCall(path: "/get"))
                #expect(server.requestCount == 1)
            }
        }
    }
}

/// A request returning the raw body.
private struct LifecycleCall: Request {
    typealias Response = Data
    var path: String
}
