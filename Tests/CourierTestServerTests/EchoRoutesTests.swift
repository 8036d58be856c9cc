import AsyncHTTPClient
import CourierTestServer
import Foundation
import NIOHTTP1
import Testing

@Suite("httpbin echo routes", .timeLimit(.minutes(2)))
struct EchoRoutesTests {
    @Test func getEchoesArgsHeadersOriginAndURL() async throws {
        try await withServer { server, client in
            let response = try await client.fetch(
                server, "/get?a=1&b=2&b=3&c=x+y%21", headers: [("x-custom-header", "v")])
            #expect(response.status == 200)
            #expect(response.headers["Content-Type"] == ["application/json"])
            let json = try response.json()
            #expect(Set(json.keys) == ["args", "headers", "origin", "url"])
            #expect(json.object("args").string("a") == "1")
            #expect(json.object("args")["b"] as? [String] == ["2", "3"])
            #expect(json.object("args").string("c") == "x y!")
            #expect(json.object("headers").string("X-Custom-Header") == "v")
            #expect(json.object("headers").string("Host") == "127.0.0.1:\(server.port)")
            #expect(json.string("origin") == "127.0.0.1")
            #expect(json.string("url") == "http://127.0.0.1:\(server.port)/get?a=1&b=2&b=3&c=x+y%21")
        }
    }

    @Test(arguments: [HTTPMethod.POST, .PUT, .PATCH, .DELETE])
    func bodyMethodsEchoJSON(method: HTTPMethod) async throws {
        try await withServer { server, client in
            let path = "/" + method.rawValue.lowercased()
            let body = Array(#"{"name": "courier", "n": 3, "ok": true, "list": [1, 2.5]}"#.utf8)
            let response = try await client.fetch(
                server,
                path + "?q=1",
                method: method,
                headers: [("Content-Type", "application/json")],
                body: body
            )
            #expect(response.status == 200)
            let json = try response.json()
            #expect(Set(json.keys) == ["args", "data", "files", "form", "headers", "json", "origin", "url"])
            #expect(json.string("data") == String(decoding: body, as: UTF8.self))
            #expect(json.object("json").string("name") == "courier")
            #expect(json.object("json")["n"] as? Int == 3)
            #expect(json.object("json")["ok"] as? Bool == true)
            #expect(json.object("args").string("q") == "1")
            #expect(json.object("form").isEmpty)
        }
    }

    @Test(arguments: [("/get", HTTPMethod.POST), ("/post", .GET), ("/put", .POST), ("/delete", .GET)])
    func wrongMethodIs405(path: String, method: HTTPMethod) async throws {
        try await withServer { server, client in
            let response = try await client.fetch(server, path, method: method)
            #expect(response.status == 405)
            #expect(!response.headers["Allow"].isEmpty)
        }
    }

    @Test(arguments: [HTTPMethod.GET, .POST, .PUT, .PATCH, .DELETE, .OPTIONS])
    func anythingEchoesMethod(method: HTTPMethod) async throws {
        try await withServer { server, client in
            let response = try await client.fetch(server, "/anything/some/path?x=y", method: method)
            #expect(response.status == 200)
            let json = try response.json()
            #expect(json.string("method") == method.rawValue)
            #expect(json.string("url") == "http://127.0.0.1:\(server.port)/anything/some/path?x=y")
            #expect(json["json"] is NSNull)
        }
    }

    @Test func urlencodedFormBecomesForm() async throws {
        try await withServer { server, client in
            let response = try await client.fetch(
                server,
                "/post",
                method: .POST,
                headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: Array("a=1&b=two+words&b=%C3%A9&t=00%3A00%2B01%3A00".utf8)
            )
            let json = try response.json()
            #expect(json.object("form").string("a") == "1")
            #expect(json.object("form")["b"] as? [String] == ["two words", "é"])
            #expect(json.object("form").string("t") == "00:00+01:00")
            #expect(json.string("data") == "")
            #expect(json["json"] is NSNull)
        }
    }

    @Test func multipartFormSplitsFieldsAndFiles() async throws {
        try await withServer { server, client in
            let boundary = "XyZ123"
            var body = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\nvalue\r\n".utf8)
            body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"a.txt\"\r\n".utf8)
            body += Array("Content-Type: text/plain\r\n\r\nhello file\r\n".utf8)
            body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"bin\"; filename=\"b.bin\"\r\n".utf8)
            body += Array("Content-Type: application/octet-stream\r\n\r\n".utf8) + [0xFF, 0x00, 0xFE]
            body += Array("\r\n--\(boundary)--\r\n".utf8)
            let response = try await client.fetch(
                server,
                "/post",
                method: .POST,
                headers: [("Content-Type", "multipart/form-data; boundary=\(boundary)")],
                body: body
            )
            let json = try response.json()
            #expect(json.object("form").string("field") == "value")
            #expect(json.object("files").string("doc") == "hello file")
            #expect(json.object("files").string("bin") == "data:application/octet-stream;base64,/wD+")
            #expect(json.string("data") == "")
        }
    }

    @Test func headersUserAgentIPAndUUID() async throws {
        try await withServer { server, client in
            let headers = try await client.fetch(server, "/headers", headers: [("X-A", "1"), ("x-a", "2")]).json()
            #expect(headers.object("headers").string("X-A") == "1,2")
            let agent = try await client.fetch(server, "/user-agent", headers: [("User-Agent", "courier/1")]).json()
            #expect(agent.string("user-agent") == "courier/1")
            #expect(try await client.fetch(server, "/ip").json().string("origin") == "127.0.0.1")
            let uuid = try await client.fetch(server, "/uuid").json().string("uuid")
            #expect(uuid.flatMap(UUID.init(uuidString:)) != nil)
        }
    }

    @Test func headHasNoBody() async throws {
        try await withServer { server, client in
            let response = try await client.fetch(server, "/get", method: .HEAD)
            #expect(response.status == 200)
            #expect(response.body.isEmpty)
        }
    }

    @Test func customRoutesWinOverBuiltIns() async throws {
        try await withServer { server, client in
            server.register("GET", "/get") { _ in .text("custom") }
            server.register(nil, "/echo") { request in
                TestServerResponse(status: 201, headers: [("X-Method", request.method)], body: request.body)
            }
            server.register("GET", "/boom") { _ in throw CancellationError() }
            #expect(try await client.fetch(server, "/get").text == "custom")
            let echo = try await client.fetch(server, "/echo", method: .PUT, body: Array("abc".utf8))
            #expect(echo.status == 201)
            #expect(echo.text == "abc")
            #expect(echo.headers["X-Method"] == ["PUT"])
            #expect(try await client.fetch(server, "/boom").status == 500)
            #expect(try await client.fetch(server, "/no-such-route").status == 404)
            #expect(server.requestCount == 4)
        }
    }

    @Test func delayWaitsThenEchoes() async throws {
        try await withServer { server, client in
            let clock = ContinuousClock()
            let start = clock.now
            let response = try await client.fetch(server, "/delay/0.2?a=b")
            #expect(clock.now - start >= .milliseconds(200))
            #expect(try response.json().object("args").string("a") == "b")
        }
    }
}
