#if TestServer
    /// httpbin's `/status/{codes}` and redirect routes: `/redirect/{n}`, `/redirect-to`, `/absolute-redirect/{n}`,
    /// `/relative-redirect/{n}`.
    enum RedirectRoutes {
        static func handle(_ name: Substring, _ context: RouteContext) async throws -> Disposition {
            switch name {
            case "status":
                return try await status(context)
            case "redirect-to":
                return try await redirectTo(context)
            default:
                guard let count = context.arguments.first.flatMap({ Int($0) }), count > 0 else {
                    return try await context.respond(.text("redirect count must be a positive integer", status: 400))
                }
                let absolute =
                    name == "absolute-redirect"
                    || (name == "redirect" && context.query("absolute")?.lowercased() == "true")
                let kind = absolute ? "absolute-redirect" : "relative-redirect"
                let path = count == 1 ? "/get" : "/\(kind)/\(count - 1)"
                return try await context.status(302, headers: [("Location", absolute ? context.origin + path : path)])
            }
        }

        /// `/redirect-to?url=…&status_code=…`, any method; the arguments may also come as a form body.
        private static func redirectTo(_ context: RouteContext) async throws -> Disposition {
            let form = ParsedBody(context.request).form
            func argument(_ name: String) -> String? {
                context.query(name) ?? form.first { $0.name == name }?.value
            }
            guard let target = argument("url") else {
                return try await context.respond(.text("missing url", status: 400))
            }
            var code = 302
            if let requested = argument("status_code").flatMap({ Int($0) }), (300..<400).contains(requested) {
                code = requested
            }
            return try await context.status(code, headers: [("Location", target)])
        }

        /// `/status/200`, `/status/200,500` (uniform pick) or `/status/200:0.9,500:0.1` (weighted pick).
        private static func status(_ context: RouteContext) async throws -> Disposition {
            var choices: [(code: Int, weight: Double)] = []
            for item in (context.arguments.first ?? "").split(separator: ",") {
                let parts = item.split(separator: ":", maxSplits: 1)
                // Not 1xx: an interim response is not an answer, and the client would wait for the final one.
                guard let code = Int(parts[0]), (200..<600).contains(code) else {
                    return try await context.respond(.text("Invalid status code", status: 400))
                }
                let weight = parts.count == 2 ? Double(parts[1]) ?? 1 : 1
                // A weight that is not a positive finite number counts as 0 (`inf` or `nan` would trap the pick).
                choices.append((code, weight.isFinite && weight > 0 ? weight : 0))
            }
            guard !choices.isEmpty else {
                return try await context.respond(.text("Invalid status code", status: 400))
            }
            let total = choices.reduce(0) { $0 + $1.weight }
            guard total > 0, total.isFinite else {
                // No usable weight (all 0): a uniform pick, as for a list without weights.
                return try await context.status(choices.randomElement()?.code ?? 200)
            }
            var pick = Double.random(in: 0..<total)
            var code = choices[choices.count - 1].code
            for choice in choices {
                if pick < choice.weight {
                    code = choice.code
                    break
                }
                pick -= choice.weight
            }
            return try await context.respond(response(forStatus: code))
        }

        /// The response httpbin's `status_code(code)` builds.
        static func response(forStatus code: Int) -> TestServerResponse {
            switch code {
            case 301, 302, 303, 305, 307:
                return TestServerResponse(status: code, headers: [("Location", "/redirect/1")])
            case 401:
                return TestServerResponse(status: code, headers: [("WWW-Authenticate", "Basic realm=\"Fake Realm\"")])
            case 407:
                return TestServerResponse(status: code, headers: [("Proxy-Authenticate", "Basic realm=\"Fake Realm\"")])
            case 402:
                return TestServerResponse(
                    status: code,
                    headers: [("X-More-Info", "http://vimeo.com/22053820")],
                    body: Array("Fuck you, pay me!".utf8)
                )
            case 418:
                return TestServerResponse(
                    status: code,
                    headers: [("X-More-Info", "http://tools.ietf.org/html/rfc2324")],
                    body: Array("\n    -=[ teapot ]=-\n".utf8)
                )
            default:
                return TestServerResponse(status: code, headers: [("Content-Type", "text/html; charset=utf-8")])
            }
        }
    }
#endif
