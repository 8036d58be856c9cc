import CourierTestServer
import Foundation

/// The demo's own API routes on the embedded server, next to its httpbin-compatible ones.
enum DemoRoutes {
    static func install(on server: TestServer) {
        server.register("GET", "/api/profile") { _ in
            .json(#"{"code":403,"reason":"Invalid Token."}"#, status: 403)
        }
        server.register("GET", "/api/empty") { _ in TestServerResponse(status: 200) }
        let tokens = TokenDesk()
        server.register("POST", "/oauth/token") { request in
            let form = String(decoding: request.body, as: UTF8.self)
            guard form.contains("grant_type=refresh_token"), form.contains("refresh_token=refresh-1") else {
                return .json(#"{"error":"invalid_grant"}"#, status: 400)
            }
            let number = await tokens.issue()
            return .json(
                #"{"access_token":"access-\#(number)","refresh_token":"refresh-1","expires_in":3600,"token_type":"Bearer"}"#
            )
        }
        server.register("GET", "/api/me") { request in
            guard let authorization = request.header("Authorization"), await tokens.isCurrent(authorization) else {
                return TestServerResponse(
                    status: 401,
                    headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)],
                    body: Array(#"{"code":401,"reason":"Token expired."}"#.utf8)
                )
            }
            return .json(#"{"name":"Ada","email":"ada@example.com"}"#)
        }
        server.register("GET", "/api/refreshes") { _ in .text("\(await tokens.issued)") }
        let flaky = FlakyCounter()
        server.register("GET", "/flaky") { _ in
            await flaky.next() % 2 == 1
                ? TestServerResponse(status: 503, headers: [("Retry-After", "1")], body: Array("busy".utf8))
                : .text("recovered")
        }
        CacheDemoRoute.install(on: server)
        installJobRoutes(on: server)
    }

    /// Scenario 10: items that report how many item calls were in flight when they arrived, and a login chain.
    static func installJobRoutes(on server: TestServer) {
        let gauge = InFlightGauge()
        server.register("GET", "/jobs/item") { request in
            let inFlight = await gauge.enter()
            try? await Task.sleep(for: .milliseconds(150))  // holds the call open so that overlap is visible
            await gauge.leave()
            return .json(#"{"number":\#(Int(request.queryValue("n") ?? "") ?? 0),"inFlight":\#(inFlight)}"#)
        }
        server.register("POST", "/jobs/client-secret") { request in
            let body = String(decoding: request.body, as: UTF8.self)
            guard body.contains(#""email":"ada@example.com""#) else {
                return .json(#"{"code":401,"reason":"Unknown user."}"#, status: 401)
            }
            return .json(#"{"id":"client-7","secret":"s3cr3t"}"#)
        }
        server.register("POST", "/jobs/token") { request in
            let form = String(decoding: request.body, as: UTF8.self)
            guard form.contains("client_id=client-7"), form.contains("client_secret=s3cr3t") else {
                return .json(#"{"error":"invalid_client"}"#, status: 400)
            }
            return .json(#"{"access_token":"job-token-1","token_type":"Bearer"}"#)
        }
        server.register("GET", "/jobs/me") { request in
            guard request.header("Authorization") == "Bearer job-token-1" else {
                return TestServerResponse(status: 401)
            }
            return .json(#"{"name":"Ada","email":"ada@example.com"}"#)
        }
    }
}

/// Counts the `/jobs/item` calls in flight.
actor InFlightGauge {
    private var inFlight = 0

    /// Counts one more call in flight and returns the count, this call included.
    func enter() -> Int {
        inFlight += 1
        return inFlight
    }

    func leave() { inFlight -= 1 }
}

/// Counts calls to `/flaky`, so every other one fails.
actor FlakyCounter {
    private var count = 0
    func next() -> Int {
        count += 1
        return count
    }
}

/// The demo's token endpoint: issues `access-N` tokens; only the newest is accepted.
actor TokenDesk {
    private(set) var issued = 0

    func issue() -> Int {
        issued += 1
        return issued
    }

    func isCurrent(_ authorization: String) -> Bool {
        issued > 0 && authorization == "Bearer access-\(issued)"
    }
}
