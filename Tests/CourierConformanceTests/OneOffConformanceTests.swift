import Courier
import Foundation
import Testing

/// One-off calls without a `Request` type, and `exchange(for:)`: the value with its status, headers and trace.
extension Conformance {
    @Suite("One-off calls and exchanges")
    struct OneOffConformanceTests {
        @Test("client.get / post / call decode JSON, text and bytes", arguments: TransportKind.all, ServerKind.all)
        func oneOffCalls(transport: TransportKind, server: ServerKind) async throws {
            try await server.withBaseURL { baseURL in
                let client = makeClient(transport, baseURL)
                let echo = try await client.get("/get", query: ["q": "a b"], headers: ["X-One": "off"], as: Echo.self)
                #expect(echo.args == ["q": "a b"])
                #expect(echo.headers["X-One"] == "off")
                let posted = try await client.post("/post", body: .json(["name": "Ada"]), as: Echo.self)
                #expect(posted.json == .object(["name": .string("Ada")]))
                let bytes = try await client.get("/bytes/16", as: Data.self)
                #expect(bytes.count == 16)
                let text = try await client.get("/robots.txt", as: String.self)
                #expect(text.contains("Disallow"))
                let deleted = try await client.call(.delete, "/delete", as: Echo.self)
                #expect(deleted.url.hasSuffix("/delete"))
                let missing = await expectCourierError { try await client.get("/status/404", as: Data.self) }
                #expect(missing?.response?.status.code == 404)
            }
        }

        @Test(
            "client.put / patch decode, and check the status",
            arguments: TransportKind.all, ServerKind.all)
        func methodsWithoutType(transport: TransportKind, server: ServerKind) async throws {
            try await server.withBaseURL { baseURL in
                let client = makeClient(transport, baseURL)
                let put = try await client.put("/put", body: .json(["name": "Ada"]), as: Echo.self)
                #expect(put.json == .object(["name": .string("Ada")]))
                let patched = try await client.patch(
                    "/patch", body: .form(["n": "1"]), query: ["q": "1"], as: Echo.self)
                #expect(patched.args == ["q": "1"])
                #expect(patched.form == ["n": "1"])
                let deleted = try await client.call(.delete, "/delete", query: ["id": "7"], as: Echo.self)
                #expect(deleted.args == ["id": "7"])
                let refused = await expectCourierError {
                    try await client.put("/status/409", body: .text("x"), as: Data.self)
                }
                #expect(refused?.code == .unacceptableStatus)
                #expect(refused?.response?.status.code == 409)
            }
        }

        @Test(
            "Basic authentication: /basic-auth accepts the adapter's credentials, and refuses wrong ones with 401",
            arguments: TransportKind.all, ServerKind.all)
        func basicAuthentication(transport: TransportKind, server: ServerKind) async throws {
            struct Authenticated: Decodable, Sendable {
                let authenticated: Bool
                let user: String
            }
            try await server.withBaseURL { baseURL in
                let client = makeClient(transport, baseURL).configured {
                    $0.adapters.append(.basic(user: "ada", password: "pä ss:w"))
                }
                let answer = try await client.get("/basic-auth/ada/pä ss:w", as: Authenticated.self)
                #expect(answer.authenticated && answer.user == "ada")
                // A 401 with WWW-Authenticate: URLSession on Linux held it until the idle timeout (60 s, idleTimeout).
                let start = ContinuousClock.now
                let wrong = await expectCourierError { try await client.get("/basic-auth/ada/other", as: Data.self) }
                #expect(wrong?.code == .unacceptableStatus, "\(String(describing: wrong))")
                #expect(wrong?.response?.status.code == 401)
                #expect(ContinuousClock.now - start < .seconds(10))
            }
        }

        @Test(
            "exchange(for:) returns the value with status, header fields, attempts, trace and duration",
            arguments: TransportKind.all, ServerKind.all)
        func exchange(transport: TransportKind, server: ServerKind) async throws {
            try await server.withBaseURL { baseURL in
                let client = makeClient(transport, baseURL)
                let exchange = try await client.exchange(
                    for: OneOffCall(path: "/response-headers", query: ["X-RateLimit-Remaining": "41"]))
                #expect(exchange.status == .ok)
                #expect(exchange.headerFields[HTTPField.Name("X-RateLimit-Remaining")!] == "41")
                #expect(exchange.attempts == 1)
                #expect(exchange.trace.description.contains("validateStatus ✓"))
                #expect(exchange.duration > .zero)
                #expect(exchange.request?.path?.hasPrefix("/response-headers?") == true)
                #expect(exchange.bodySize == exchange.value.count)
                // A redirect is one more attempt, and the exchange describes the final response.
                let redirected = try await client.exchange(for: OneOffCall(path: "/redirect/1"))
                #expect(redirected.attempts == 2)
                #expect(redirected.request?.path == "/get")
            }
        }
    }
}

/// A request returning the raw body.
private struct OneOffCall: Request {
    typealias Response = Data
    var path: String
    var query: Parameters? = nil
}
