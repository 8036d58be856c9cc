import Courier
import CourierCore
import CourierTestServer
import Foundation
import Testing

extension Conformance {
    /// RFC 3986 §5.4's examples as real `Location` headers: the embedded server answers `/b/c/d;p?q` with a 302 to
    /// each reference, and the test checks which URI the server is asked for next, on every transport.
    @Suite("Conformance: RFC 3986 §5.4 redirects", .timeLimit(.minutes(2)))
    struct RedirectResolutionConformanceTests {
        /// Sends the first request to `/b/c/d;p?q` (a query `q` without `=`, as in the RFC's base URI).
        struct BareQuery: RequestAdapter {
            var name: String { "rfc3986-base" }
            func adapt(_ request: OutgoingRequest, context: AdapterContext) async throws -> OutgoingRequest {
                var request = request
                if request.head.path == "/b/c/d;p" { request.head.path = "/b/c/d;p?q" }
                return request
            }
        }

        /// The references that stay on the server's host, and the request target each one must produce.
        static let cases: [(reference: String, target: String)] = [
            ("g", "/b/c/g"), ("./g", "/b/c/g"), ("g/", "/b/c/g/"), ("/g", "/g"), ("?y", "/b/c/d;p?y"),
            ("g?y", "/b/c/g?y"), ("#s", "/b/c/d;p?q"), ("g#s", "/b/c/g"), ("g?y#s", "/b/c/g?y"), (";x", "/b/c/;x"),
            ("g;x", "/b/c/g;x"), ("g;x?y#s", "/b/c/g;x?y"), ("", "/b/c/d;p?q"), (".", "/b/c/"), ("./", "/b/c/"),
            ("..", "/b/"), ("../", "/b/"), ("../g", "/b/g"), ("../..", "/"), ("../../", "/"), ("../../g", "/g"),
            ("../../../g", "/g"), ("../../../../g", "/g"), ("/./g", "/g"), ("/../g", "/g"), ("g.", "/b/c/g."),
            (".g", "/b/c/.g"), ("g..", "/b/c/g.."), ("..g", "/b/c/..g"), ("./../g", "/b/g"), ("./g/.", "/b/c/g/"),
            ("g/./h", "/b/c/g/h"), ("g/../h", "/b/c/h"), ("g;x=1/./y", "/b/c/g;x=1/y"), ("g;x=1/../y", "/b/c/y"),
            ("g?y/./x", "/b/c/g?y/./x"), ("g?y/../x", "/b/c/g?y/../x"), ("g#s/./x", "/b/c/g"),
            ("g#s/../x", "/b/c/g"), ("ORIGIN/b/c/../g", "/b/g"), ("ORIGIN/./g/../h", "/h"),
        ]

        @Test(
            "each §5.4 reference leads to the request target the RFC resolves it to",
            arguments: TransportKind.all, cases)
        func resolves(transport: TransportKind, example: (reference: String, target: String)) async throws {
            try await withTestServer { server in
                let origin = server.baseURL.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
                let location = example.reference.replacingOccurrences(of: "ORIGIN", with: origin)
                let redirected = LockedBox(false)
                let targetPath = String(example.target.prefix { $0 != "?" })
                server.register("GET", "/b/c/d;p") { request in
                    // The first visit redirects; a second (the reference resolves to the same URL) answers.
                    if redirected.withLock({ (done: inout Bool) -> Bool in
                        defer { done = true }
                        return done
                    }) {
                        return .text(request.uri)
                    }
                    return TestServerResponse(status: 302, headers: [("Location", location)])
                }
                if targetPath != "/b/c/d;p" {
                    server.register("GET", targetPath) { request in .text(request.uri) }
                }
                let client = makeClient(transport, server.baseURL) { $0.adapters.append(BareQuery()) }
                let reached = try await client.get("/b/c/d;p", as: String.self)
                #expect(reached == example.target, "Location: \(location)")
                #expect(server.requestCount == 2)
            }
        }

        @Test("a redirect to the current URL that repeats is a cycle, after two requests", arguments: TransportKind.all)
        func repeatingSelfRedirect(transport: TransportKind) async throws {
            try await withTestServer { server in
                server.register("GET", "/again") { _ in TestServerResponse(status: 302, headers: [("Location", "")]) }
                let client = makeClient(transport, server.baseURL)
                let error = await expectCourierError { try await client.get("/again", as: String.self) }
                #expect(error?.code == .redirectCycle)
                #expect(server.requestCount == 2)
            }
        }
    }
}
