#if TestServer
    /// A built-in route: how it wants the request body, and what it does.
    struct BuiltinRoute: Sendable {
        /// Whether the server buffers the body before the route runs, or the route reads it itself.
        enum BodyMode: Sendable {
            case buffered
            case streamed
        }

        var bodyMode: BodyMode = .buffered
        var handle: @Sendable (RouteContext) async throws -> Disposition
    }

    /// Maps a request path to a built-in route by its first segment.
    enum Router {
        /// The route for `path` and the path segments after its first one, or `nil` for an unknown path.
        static func route(for path: String) -> (route: BuiltinRoute, arguments: [Substring])? {
            let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            guard let first = segments.first else { return nil }
            let arguments = Array(segments.dropFirst())
            if first == "fault" {
                guard let name = arguments.first, let route = FaultRoutes.route(named: name) else { return nil }
                return (route, Array(arguments.dropFirst()))
            }
            guard let route = builtin(named: first) else { return nil }
            return (route, arguments)
        }

        private static func builtin(named name: Substring) -> BuiltinRoute? {
            let handler: (@Sendable (RouteContext) async throws -> Disposition)? =
                switch name {
                case "get", "post", "put", "patch", "delete", "anything", "headers", "user-agent", "ip", "uuid",
                    "delay":
                    { context in try await EchoRoutes.handle(name, context) }
                case "status", "redirect", "redirect-to", "absolute-redirect", "relative-redirect":
                    { context in try await RedirectRoutes.handle(name, context) }
                case "bytes", "stream-bytes", "range", "drip", "upload", "trailers":
                    { context in try await StreamingRoutes.handle(name, context) }
                case "gzip", "deflate", "response-headers", "json", "html", "robots.txt", "base64", "encoding":
                    { context in try await ContentRoutes.handle(name, context) }
                case "cache", "etag", "basic-auth", "hidden-basic-auth", "bearer", "cookies":
                    { context in try await AuthAndCacheRoutes.handle(name, context) }
                case "sse", "ndjson", "sse-release", "completion":
                    { context in try await EventRoutes.handle(name, context) }
                default: nil
                }
            guard let handler else { return nil }
            return BuiltinRoute(bodyMode: name == "upload" ? .streamed : .buffered, handle: handler)
        }
    }
#endif
