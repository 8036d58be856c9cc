import Courier
import Foundation
import HTTPTypes
import Testing

/// The same inputs give the same observable behaviour on every transport, against a real httpbin.
@Suite("Conformance: real httpbin", .enabled(if: HTTPBin.isAvailable), .timeLimit(.minutes(2)))
struct HTTPBinConformanceTests {
    @Test("GET with a query: args echoed, +;& and spaces intact", arguments: TransportKind.all)
    func getWithQuery(transport: TransportKind) async throws {
        let client = try HTTPBin.client(transport)
        let value = "t=2024-01-01T00:00:00+01:00; a&b=c d é"
        let echo = try await client.send(HTTPBinCall<Echo>(path: "/get", query: ["q": value, "n": 1]))
        #expect(echo.args == ["q": value, "n": "1"])
    }

    @Test("every method with a form, JSON or bytes body is echoed", arguments: TransportKind.all)
    func methodsAndBodies(transport: TransportKind) async throws {
        let client = try HTTPBin.client(transport)
        for method in [HTTPRequest.Method.post, .put, .patch, .delete] {
            let form = try await client.send(
                HTTPBinCall<Echo>(method: method, path: "/anything", body: .form(["foo": "bar baz", "x": "1+1"]))
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

    @Test("a non-2xx status is a typed error carrying the response", arguments: TransportKind.all)
    func statusHandling(transport: TransportKind) async throws {
        let client = try HTTPBin.client(transport)
        for code in [400, 404, 418, 500] {
            let error = await expectCourierError { try await client.send(HTTPBinCall<Echo>(path: "/status/\(code)")) }
            #expect(error?.code == .unacceptableStatus)
            #expect(error?.response?.status.code == code)
        }
    }

    @Test("redirect chains are followed by Courier", arguments: TransportKind.all)
    func redirects(transport: TransportKind) async throws {
        let client = try HTTPBin.client(transport)
        for path in ["/redirect/3", "/absolute-redirect/2", "/relative-redirect/2"] {
            let echo = try await client.send(HTTPBinCall<Echo>(path: path))
            #expect(echo.url.hasSuffix("/get"))
        }
    }

    @Test("row 1 on the wire: a cross-origin redirect strips credentials", arguments: TransportKind.all)
    func crossOriginRedirectStripsCredentials(transport: TransportKind) async throws {
        let client = try HTTPBin.client(transport)
        let other = try #require(HTTPBin.otherOrigin)
        let target = other.appendingPathComponent("headers").absoluteString
        let headers: RequestHeaders = [
            "Authorization": "Bearer s3cret", "Cookie": "a=b", "Proxy-Authorization": "Basic eA==", "X-Custom": "kept",
        ]
        struct Headers: Decodable, Sendable { let headers: [String: String] }
        let echo = try await client.send(
            HTTPBinCall<Headers>(path: "/redirect-to", query: ["url": target], headers: headers)
        )
        #expect(echo.headers["Authorization"] == nil)
        #expect(echo.headers["Cookie"] == nil)
        #expect(echo.headers["Proxy-Authorization"] == nil)
        #expect(echo.headers["X-Custom"] == "kept")

        let sameOrigin = try await client.send(
            HTTPBinCall<Headers>(path: "/redirect-to", query: ["url": "/headers"], headers: headers)
        )
        #expect(sameOrigin.headers["Authorization"] == "Bearer s3cret")
    }

    @Test("a 303 after a POST becomes a GET without a body", arguments: TransportKind.all)
    func seeOther(transport: TransportKind) async throws {
        let client = try HTTPBin.client(transport)
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

    @Test("a body over the limit fails with bodyTooLarge, with or without Content-Length", arguments: TransportKind.all)
    func bodyLimit(transport: TransportKind) async throws {
        let client = try HTTPBin.client(transport) { $0.maxResponseBodySize = 10_000 }
        for path in ["/bytes/20000", "/stream-bytes/20000"] {
            let error = await expectCourierError { try await client.send(HTTPBinCall<Echo>(path: path)) }
            #expect(error?.code == .bodyTooLarge)
        }
    }

    @Test("the deadline ends a slow call with timedOut", arguments: TransportKind.all)
    func deadline(transport: TransportKind) async throws {
        let client = try HTTPBin.client(transport)
        let start = ContinuousClock.now
        let error = await expectCourierError {
            try await client.send(HTTPBinCall<Echo>(path: "/delay/5", timeout: .milliseconds(300)))
        }
        #expect(error?.code == .timedOut)
        #expect(ContinuousClock.now - start < .seconds(3))
    }

    @Test("cancelling the task ends the call promptly with CancellationError", arguments: TransportKind.all)
    func cancellation(transport: TransportKind) async throws {
        let client = try HTTPBin.client(transport)
        let start = ContinuousClock.now
        let task = Task { try await client.send(HTTPBinCall<Echo>(path: "/delay/5")) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(ContinuousClock.now - start < .seconds(3))
    }

    @Test("a gzip body is decoded within the limit", arguments: TransportKind.all)
    func gzip(transport: TransportKind) async throws {
        struct Gzipped: Decodable, Sendable { let gzipped: Bool }
        let client = try HTTPBin.client(transport)
        let value = try await client.send(HTTPBinCall<Gzipped>(path: "/gzip"))
        #expect(value.gzipped)
    }
}
