#if TestServer
    import Foundation

    /// Fixed and encoded content: `/gzip`, `/deflate` (`?coding=` names another `Content-Encoding` for the same body), `/response-headers`, `/json`, `/html`, `/robots.txt`,
    /// `/base64/{value}`, `/encoding/utf8`.
    enum ContentRoutes {
        static func handle(_ name: Substring, _ context: RouteContext) async throws -> Disposition {
            switch name {
            case "gzip", "deflate":
                let gzip = name == "gzip"
                var fields: [String: JSONValue] = [
                    "headers": EchoRoutes.headers(of: context.request),
                    "method": .string(context.request.method),
                    "origin": .string(context.request.remoteAddress),
                ]
                fields[gzip ? "gzipped" : "deflated"] = true
                let plain = JSONValue.object(fields).bytes
                let body = gzip ? DeflateEncoder.gzip(plain) : DeflateEncoder.zlib(plain)
                // `?coding=x-gzip` (or `identity, gzip`, …) names the coding otherwise: the body stays the same.
                var coding = gzip ? "gzip" : "deflate"
                if let named = context.query("coding"), !named.contains(where: \.isNewline) {
                    coding = named
                }
                let headers = [("Content-Type", "application/json"), ("Content-Encoding", coding)]
                return try await context.respond(TestServerResponse(headers: headers, body: body))
            case "response-headers":
                return try await responseHeaders(context)
            case "json":
                return try await context.json(slideshow)
            case "html", "encoding":
                let html =
                    "<!DOCTYPE html>\n<html>\n  <head>\n  </head>\n  <body>\n      <h1>Herman Melville - Moby-Dick</h1>\n"
                    + "      <div><p>Availing himself of the mild, summer-cool weather that now reigned in these "
                    + "latitudes, … ∑ ∂ ✓</p></div>\n  </body>\n</html>"
                let response = TestServerResponse(
                    headers: [("Content-Type", "text/html; charset=utf-8")],
                    body: Array(html.utf8)
                )
                return try await context.respond(response)
            case "robots.txt":
                return try await context.respond(.text("User-agent: *\nDisallow: /deny\n"))
            default:
                return try await base64(context)
            }
        }

        /// `/response-headers?k=v`: every query item becomes a header, and the JSON body lists them all.
        private static func responseHeaders(_ context: RouteContext) async throws -> Disposition {
            guard context.request.method == "GET" || context.request.method == "POST" else {
                return try await EchoRoutes.methodNotAllowed(context, "GET, POST")
            }
            let items = context.request.queryItems
            var grouped = FormDecoding.semiflatten(items)
            guard case .object(var fields) = grouped else { return try await context.status(500) }
            fields["Content-Type"] = "application/json"
            // Like httpbin, iterate until the Content-Length the body reports matches the body's own length.
            var length = 0
            for _ in 0..<4 {
                fields["Content-Length"] = .string(String(length))
                grouped = .object(fields)
                let next = grouped.bytes.count
                if next == length { break }
                length = next
            }
            let headers = [("Content-Type", "application/json")] + items.map { ($0.name, $0.value) }
            return try await context.respond(TestServerResponse(headers: headers, body: grouped.bytes))
        }

        /// `/base64/{value}`: the URL-safe base64 value decoded.
        private static func base64(_ context: RouteContext) async throws -> Disposition {
            var text = FormDecoding.percentDecode(context.arguments.first ?? "", plusIsSpace: false)
                .replacingOccurrences(of: "-", with: "+")
                .replacingOccurrences(of: "_", with: "/")
            text += String(repeating: "=", count: (4 - text.count % 4) % 4)
            guard let data = Data(base64Encoded: text) else {
                return try await context.respond(.text("Incorrect Base64 data try: SFRUUEJJTiBpcyBhd2Vzb21l"))
            }
            let response = TestServerResponse(
                headers: [("Content-Type", "text/html; charset=utf-8")], body: Array(data))
            return try await context.respond(response)
        }

        /// httpbin's `/json` sample document.
        private static let slideshow: JSONValue = [
            "slideshow": [
                "author": "Yours Truly",
                "date": "date of publication",
                "slides": [
                    ["title": "Wake up to WonderWidgets!", "type": "all"],
                    [
                        "items": ["Why <em>WonderWidgets</em> are great", "Who <em>buys</em> WonderWidgets"],
                        "title": "Overview",
                        "type": "all",
                    ],
                ],
                "title": "Sample Slide Show",
            ]
        ]
    }
#endif
