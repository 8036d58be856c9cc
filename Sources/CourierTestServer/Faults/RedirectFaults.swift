#if TestServer
    /// Hostile redirects.
    ///
    /// - `redirect-loop/a` → `/fault/redirect-loop/b` → `/fault/redirect-loop/a` → … (302 each).
    /// - `redirect?to=<anything>&status=302`: `Location` is `to`, verbatim, for any method — `file:///etc/passwd`,
    ///   `ftp://…`, `http+unix://…`, another port, or a relative `../x`. With `body=N` (at most 64 MiB), the 3xx
    ///   carries a body of `N` bytes, as a hostile or broken server's redirect may.
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
            let size = FaultRoutes.integer(context, "body", 0, in: 0...(64 << 20))
            return try await context.respond(
                TestServerResponse(
                    status: status, headers: [("Location", target)], body: [UInt8](repeating: 0x78, count: size)))
        }
    }
#endif
