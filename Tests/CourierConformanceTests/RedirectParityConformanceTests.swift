import Courier
import CourierTestServer
import Foundation
import HTTPTypes
import Testing

extension Conformance {
    /// Reliability row 9: rows 2, 6, 7 and 8 on the wire behave identically on every transport, because Courier,
    /// not the transport, follows redirects.
    @Suite("Conformance: redirect parity (row 9)", .timeLimit(.minutes(2)))
    struct RedirectParityConformanceTests {
        struct Headers: Decodable, Sendable { let headers: [String: String] }

        struct Echo: Decodable, Sendable {
            let method: String?
            let data: String?
        }

        @Test("row 2: a redirect to the same host on another port strips credentials", arguments: TransportKind.all)
        func otherPort(transport: TransportKind) async throws {
            try await withTestServer { origin in
                try await withTestServer { other in
                    let client = makeClient(transport, origin.baseURL)
                    let target = other.baseURL.appendingPathComponent("headers").absoluteString
                    let echoed = try await client.send(
                        HTTPBinCall<Headers>(
                            path: "/redirect-to", query: ["url": target],
                            headers: ["Authorization": "Bearer secret", "Cookie": "a=b", "X-Custom": "kept"])
                    )
                    let names = Set(echoed.headers.keys.map { $0.lowercased() })
                    #expect(!names.contains("authorization"))
                    #expect(!names.contains("cookie"))
                    #expect(names.contains("x-custom"))
                }
            }
        }

        @Test(
            "row 6: non-http schemes in Location are refused; a relative ../ is resolved",
            arguments: TransportKind.all)
        func schemes(transport: TransportKind) async throws {
            try await withTestServer { server in
                let client = makeClient(transport, server.baseURL)
                for target in ["file:///etc/passwd", "ftp://127.0.0.1/x", "http+unix://%2Ftmp%2Fs/x"] {
                    let error = await expectCourierError {
                        try await client.send(HTTPBinCall<Data>(path: "/fault/redirect", query: ["to": target]))
                    }
                    #expect(error?.code == .invalidRedirect, "\(target): \(String(describing: error))")
                }
                let resolved = try await client.send(
                    HTTPBinCall<Headers>(path: "/fault/redirect", query: ["to": "../headers"]))
                #expect(!resolved.headers.isEmpty)
                #expect(server.requestCount == 5)
            }
        }

        @Test(
            "row 7: a redirect loop is redirectCycle after the same hops on every transport",
            arguments: TransportKind.all)
        func loop(transport: TransportKind) async throws {
            try await withTestServer { server in
                let client = makeClient(transport, server.baseURL)
                let error = await expectCourierError {
                    try await client.send(HTTPBinCall<Data>(path: "/fault/redirect-loop/a"))
                }
                #expect(error?.code == .redirectCycle)
                // a, b, a again (a redirect back to the first URL is followed once), then b would repeat: a cycle.
                #expect(server.requestCount == 3)
            }
        }

        @Test(
            "row 8: 303 turns POST into GET without a body; 307 keeps POST and its body", arguments: TransportKind.all)
        func methods(transport: TransportKind) async throws {
            try await withTestServer { server in
                let client = makeClient(transport, server.baseURL)
                for (status, method, data) in [(303, "GET", ""), (307, "POST", "payload")] {
                    let echoed = try await client.send(
                        HTTPBinCall<Echo>(
                            method: .post, path: "/redirect-to",
                            query: ["url": "/anything", "status_code": status], body: .text("payload"))
                    )
                    #expect(echoed.method == method, "\(status)")
                    #expect((echoed.data ?? "") == data, "\(status)")
                }
            }
        }
    }
}
