import CourierTestServer
import Foundation

/// The demo's own API routes on the embedded server, next to its httpbin-compatible ones.
enum DemoRoutes {
    static func install(on server: TestServer) {
        server.register("GET", "/api/profile") { _ in
            .json(#"{"code":403,"reason":"Invalid Token."}"#, status: 403)
        }
        server.register("GET", "/api/empty") { _ in TestServerResponse(status: 200) }
        let flaky = FlakyCounter()
        server.register("GET", "/flaky") { _ in
            await flaky.next() % 2 == 1
                ? TestServerResponse(status: 503, headers: [("Retry-After", "1")], body: Array("busy".utf8))
                : .text("recovered")
        }
    }
}

/// Counts calls to `/flaky`, so every other one fails.
actor FlakyCounter {
    private var count = 0
    func next() -> Int {
        count += 1
        return count
    }
}
