import AsyncHTTPClient
import CourierTestServer
import NIOHTTP1
import Testing

@Suite("status and redirect routes", .timeLimit(.minutes(2)))
struct RedirectRoutesTests {
    @Test(arguments: [
        ("/redirect/3", "/relative-redirect/2"),
        ("/redirect/1", "/get"),
        ("/relative-redirect/2", "/relative-redirect/1"),
        ("/relative-redirect/1", "/get"),
        ("/fault/redirect-loop/a", "/fault/redirect-loop/b"),
        ("/fault/redirect-loop/b", "/fault/redirect-loop/a"),
        ("/fault/redirect?to=file:///etc/passwd", "file:///etc/passwd"),
        ("/fault/redirect?to=http%2Bunix%3A%2F%2F%252Ftmp%252Fs%2Fx", "http+unix://%2Ftmp%2Fs/x"),
        ("/fault/redirect?to=ftp://127.0.0.1/x", "ftp://127.0.0.1/x"),
        ("/fault/redirect?to=../x", "../x"),
        ("/redirect-to?url=http://127.0.0.1:1/elsewhere", "http://127.0.0.1:1/elsewhere"),
    ])
    func locations(path: String, location: String) async throws {
        try await withServer { server, client in
            let response = try await client.fetch(server, path)
            #expect(response.status == 302)
            #expect(response.headers["Location"] == [location])
        }
    }

    @Test func absoluteRedirectsNameTheServer() async throws {
        try await withServer { server, client in
            let base = "http://127.0.0.1:\(server.port)"
            let first = try await client.fetch(server, "/absolute-redirect/2")
            #expect(first.headers["Location"] == ["\(base)/absolute-redirect/1"])
            let last = try await client.fetch(server, "/redirect/1?absolute=true")
            #expect(last.headers["Location"] == ["\(base)/get"])
        }
    }

    @Test(arguments: [HTTPMethod.GET, .POST, .PUT, .DELETE])
    func redirectToAnyMethodWithStatus(method: HTTPMethod) async throws {
        try await withServer { server, client in
            let response = try await client.fetch(server, "/redirect-to?url=/anything&status_code=307", method: method)
            #expect(response.status == 307)
            #expect(response.headers["Location"] == ["/anything"])
            let other = try await client.fetch(server, "/fault/redirect?to=/anything&status=308", method: method)
            #expect(other.status == 308)
        }
    }

    @Test(arguments: [200, 201, 204, 400, 404, 418, 429, 500, 503])
    func statusCodes(code: Int) async throws {
        try await withServer { server, client in
            let response = try await client.fetch(server, "/status/\(code)")
            #expect(response.status == code)
        }
    }

    @Test func statusSpecials() async throws {
        try await withServer { server, client in
            let unauthorized = try await client.fetch(server, "/status/401")
            #expect(unauthorized.headers["WWW-Authenticate"] == ["Basic realm=\"Fake Realm\""])
            #expect(try await client.fetch(server, "/status/302").headers["Location"] == ["/redirect/1"])
            #expect(try await client.fetch(server, "/status/nope").status == 400)
            for _ in 0..<10 {
                #expect([201, 202, 203].contains(try await client.fetch(server, "/status/201,202,203").status))
            }
        }
    }

    @Test func followingRedirectsEndsAtGet() async throws {
        let follow = HTTPClient.Configuration(redirectConfiguration: .follow(max: 5, allowCycles: false))
        try await withServer(configuration: follow) { server, client in
            let response = try await client.fetch(server, "/redirect/3")
            #expect(response.status == 200)
            #expect(try response.json().string("url") == "http://127.0.0.1:\(server.port)/get")
            await #expect(throws: HTTPClientError.redirectCycleDetected) {
                try await client.fetch(server, "/fault/redirect-loop/a")
            }
        }
    }
}
