#if TestServer
    /// Hostile redirects.
    ///
    /// - `redirect-loop/a` → `/fault/redirect-loop/b` → `/fault/redirect-loop/a` → … (302 each).
    /// - `redirect?to=<anything>&status=302`: `Location` is `to`, verbatim, for any method — `file:///etc/passwd`,
    ///   `ftp://…`, `http+unix://…`, another port, or a relative `../x`.
    enum RedirectFaults {
        static func handle(_ name: Substring, _ context: RouteContext) async throws -> Disposition {
            if name == "redirect-loop" {
                let next = context.arguments.first == "a" ? "b" : "a"
                return try await context.status(302, headers: [("Location", "/fault/redirect-loop/\(next)")])
            }
            guard let target = context.query("to") else {
                return try await context.respond(.text("missing to", status: 400))
            }
            let status = FaultRoutes.integer(context, "status", 302, in: 300...399)
            return try await context.status(status, headers: [("Location", target)])
        }
    }
#endif
