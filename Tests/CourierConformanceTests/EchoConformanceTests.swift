import Courier
import Foundation
import HTTPTypes
import Testing

extension Conformance {
    /// The same inputs give the same observable behaviour on every transport, against the embedded server and a real
    /// httpbin.
    @Suite("Conformance: echo, status, redirects, limits", .timeLimit(.minutes(2)))
    struct EchoConformanceTests {
        @Test("GET with a query: args echoed, +;& and spaces intact", arguments: TransportKind.all, ServerKind.all)
        func getWithQuery(transport: TransportKind, server: ServerKind) async throws {
            try await server.withBaseURL { baseURL in
                let client = makeClient(transport, baseURL)
                let value = "t=2024-01-01T00:00:00+01:00; a&b=c d é"
                let echo = try await client.send(HTTPBinCall<Echo>(path: "/get", query: ["q": value, "n": 1]))
                #expect(echo.args == ["q": value, "n": "1"])
            }
        }

        @Test("two Cookie fields go out as one, joined with \"; \" (RFC 6265 §5.4)", arguments: TransportKind.all)
        func cookiesJoined(transport: TransportKind) async throws {
            try await ServerKind.embedded.withBaseURL { baseURL in
                let client = makeClient(transport, baseURL) { configuration in
                    configuration.adapters.append(
                        .custom("secondCookie") { request, _ in
                            var request = request
                            request.head.headerFields.append(HTTPField(name: .cookie, value: "theme=dark"))
                            return request
                        })
                }
                let echo = try await client.send(HTTPBinCall<Echo>(path: "/get", headers: ["Cookie": "session=1"]))
                // The server joins repeated fields with ",": "session=1,theme=dark" would mean two fields.
                #expect(echo.headers["Cookie"] == "session=1; theme=dark")
            }
        }

        @Test("every method with a form, JSON or bytes body is echoed", arguments: TransportKind.all, ServerKind.all)
        func methodsAndBodies(transport: TransportKind, server: ServerKind) async throws {
            try await server.withBaseURL { baseURL in
                let client = makeClient(transport, baseURL)
                for method in [HTTPRequest.Method.post, .put, .patch, .delete] {
                    let form = try await client.send(
                        HTTPBinCall<Echo>(
                            method: method, path: "/anything", body: .form(["foo": "bar baz", "x": "1+1"]))
                    )
                    #expect(form.method == method.rawValue)
                    #expect(form.form == ["foo": "bar baz", "x": "1+1"])

                    let json = try await client.send(
                        HTTPBinCall<Echo>(method: method, path: "/anything", body: .json(["a": [1, 2]]))
                    )
                    #expect(json.json == JSONValue.object(["a": .array([.number(1), .number(2)])]))
                    #expect(json.headers["Content-Type"] == "application/json")

                    let bytes = try await client.send(
                        HTTPBinCall<Echo>(method: method, path: "/anything", body: .text("plain text"))
                    )
                    #expect(bytes.data == "plain text")
                }
            }
        }

        @Test(
            "a GET with a body is sent as is, or refused as unsupported", arguments: TransportKind.all, ServerKind.all)
        func getWithBody(transport: TransportKind, server: ServerKind) async throws {
            try await server.withBaseURL { baseURL in
                let client = makeClient(transport, baseURL)
                try await withCapability(.getWithBody, on: transport) {
                    let echo = try await client.send(
                        HTTPBinCall<Echo>(method: .get, path: "/anything", body: .text("a query in a body"))
                    )
                    #expect(echo.method == "GET")
                    #expect(echo.data == "a query in a body")
                }
            }
        }

        @Test("a non-2xx status is a typed error carrying the response", arguments: TransportKind.all, ServerKind.all)
        func statusHandling(transport: TransportKind, server: ServerKind) async throws {
            try await server.withBaseURL { baseURL in
                let client = makeClient(transport, baseURL)
                for code in [400, 404, 418, 500] {
                    let error = await expectCourierError {
                        try await client.send(HTTPBinCall<Echo>(path: "/status/\(code)"))
                    }
                    #expect(error?.code == .unacceptableStatus)
                    #expect(error?.response?.status.code == code)
                }
            }
        }

        @Test("redirect chains are followed by Courier", arguments: TransportKind.all, ServerKind.all)
        func redirects(transport: TransportKind, server: ServerKind) async throws {
            try await server.withBaseURL { baseURL in
                let client = makeClient(transport, baseURL)
                for path in ["/redirect/3", "/absolute-redirect/2", "/relative-redirect/2"] {
                    let echo = try await client.send(HTTPBinCall<Echo>(path: path))
                    #expect(echo.url.hasSuffix("/get"))
                }
            }
        }

        @Test(
            "row 1 on the wire: a cross-origin redirect strips credentials", arguments: TransportKind.all,
            ServerKind.all)
        func crossOriginRedirectStripsCredentials(transport: TransportKind, server: ServerKind) async throws {
            try await server.withBaseURL { baseURL in
                let client = makeClient(transport, baseURL)
                let other = try otherOrigin(of: baseURL)
                let target = other.appendingPathComponent("headers").absoluteString
                let headers: RequestHeaders = [
                    "Authorization": "Bearer s3cret", "Cookie": "a=b", "Proxy-Authorization": "Basic eA==",
                    "Cookie2": "c=d", "WWW-Authenticate": "Basic realm=x", "Proxy-Authenticate": "Basic realm=y",
                    "X-Api-Key": "k3y", "X-Custom": "kept",
                ]
                struct Headers: Decodable, Sendable { let headers: [String: String] }
                let echo = try await client.send(
                    HTTPBinCall<Headers>(path: "/redirect-to", query: ["url": target], headers: headers)
                )
                // Every credential header, the redactor's sensitive ones (an API key) included, whatever the case
                // the server echoes its names in.
                let arrived = Set(echo.headers.keys.map { $0.lowercased() })
                for name in [
                    "authorization", "cookie", "proxy-authorization", "cookie2", "www-authenticate",
                    "proxy-authenticate", "x-api-key",
                ] {
                    #expect(!arrived.contains(name), "\(name) crossed to another origin")
                }
                #expect(echo.headers["X-Custom"] == "kept")

                let sameOrigin = try await client.send(
                    HTTPBinCall<Headers>(path: "/redirect-to", query: ["url": "/headers"], headers: headers)
                )
                #expect(sameOrigin.headers["Authorization"] == "Bearer s3cret")
            }
        }

        @Test("a 303 after a POST becomes a GET without a body", arguments: TransportKind.all, ServerKind.all)
        func seeOther(transport: TransportKind, server: ServerKind) async throws {
            try await server.withBaseURL { baseURL in
                let client = makeClient(transport, baseURL)
                let echo = try await client.send(
                    HTTPBinCall<Echo>(
                        method: .post,
                        path: "/redirect-to",
                        query: ["url": "/anything", "status_code": 303],
                        body: .json(["a": 1])
                    )
                )
                #expect(echo.method == "GET")
                #expect(echo.data == "")
            }
        }

        @Test(
            "a body over the limit fails with bodyTooLarge, with or without Content-Length",
            arguments: TransportKind.all,
            ServerKind.all)
        func bodyLimit(transport: TransportKind, server: ServerKind) async throws {
            try await server.withBaseURL { baseURL in
                let client = makeClient(transport, baseURL) { $0.maxResponseBodySize = 10_000 }
                for path in ["/bytes/20000", "/stream-bytes/20000"] {
                    let error = await expectCourierError { try await client.send(HTTPBinCall<Echo>(path: path)) }
                    #expect(error?.code == .bodyTooLarge)
                }
            }
        }

        @Test("the deadline ends a slow call with timedOut", arguments: TransportKind.all, ServerKind.all)
        func deadline(transport: TransportKind, server: ServerKind) async throws {
            try await server.withBaseURL { baseURL in
                let client = makeClient(transport, baseURL)
                let start = ContinuousClock.now
                let error = await expectCourierError {
                    try await client.send(HTTPBinCall<Echo>(path: "/delay/10", timeout: .milliseconds(300)))
                }
                #expect(error?.code == .timedOut)
                // The server answers after 10 s: well under that means the deadline ended the call, with room for a
                // loaded 2-core CI machine.
                #expect(ContinuousClock.now - start < .seconds(6))
            }
        }

        @Test(
            "cancelling the task ends the call promptly with CancellationError", arguments: TransportKind.all,
            ServerKind.all)
        func cancellation(transport: TransportKind, server: ServerKind) async throws {
            try await server.withBaseURL { baseURL in
                let client = makeClient(transport, baseURL)
                let start = ContinuousClock.now
                let task = Task { try await client.send(HTTPBinCall<Echo>(path: "/delay/10")) }
                task.cancel()
                await #expect(throws: CancellationError.self) { try await task.value }
                #expect(ContinuousClock.now - start < .seconds(6))
            }
        }

        @Test("a gzip body is decoded within the limit", arguments: TransportKind.all, ServerKind.all)
        func gzip(transport: TransportKind, server: ServerKind) async throws {
            try await server.withBaseURL { baseURL in
                struct Gzipped: Decodable, Sendable { let gzipped: Bool }
                let client = makeClient(transport, baseURL)
                let value = try await client.send(HTTPBinCall<Gzipped>(path: "/gzip"))
                #expect(value.gzipped)
            }
        }
    }
}
