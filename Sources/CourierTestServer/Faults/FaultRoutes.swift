#if TestServer
    /// The scriptable faults under `/fault/`, each provoking one failure a client must survive.
    ///
    /// Connection faults (truncation, resets, stalls, drips, stale keep-alive) live in ``ConnectionFaults``; framing
    /// and resource faults (conflicting lengths, bombs, floods, unsolicited responses) in ``FramingFaults``; hostile
    /// redirects in ``RedirectFaults``.
    enum FaultRoutes {
        /// The fault route named `name`, or `nil` for an unknown name.
        static func route(named name: Substring) -> BuiltinRoute? {
            let handler: (@Sendable (RouteContext) async throws -> Disposition)? =
                switch name {
                case "reset-mid-body", "truncate", "truncate-unclean", "chunked-truncated", "stall-after-headers",
                    "never-answer", "drip", "close-idle-after-response", "reset-on-request", "close-on-request",
                    "reset-if-reused", "reset-stream":
                    { context in try await ConnectionFaults.handle(name, context) }
                case "duplicate-content-length", "content-length-and-chunked", "gzip-bomb", "stacked-encodings",
                    "corrupt-gzip", "empty-gzip", "header-flood", "huge-header", "extra-response":
                    { context in try await FramingFaults.handle(name, context) }
                case "redirect-loop", "redirect":
                    { context in try await RedirectFaults.handle(name, context) }
                default: nil
                }
            return handler.map { BuiltinRoute(bodyMode: .buffered, handle: $0) }
        }

        /// A number of seconds between 0 and `maximum`: `fallback` when absent, 0 when negative or not a number (`nan`
        /// would trap converting it to a duration), `maximum` when larger (`inf` included).
        static func seconds(_ value: Double?, fallback: Double, maximum: Double) -> Double {
            guard let value else { return fallback }
            guard !value.isNaN, value > 0 else { return 0 }
            return min(value, maximum)
        }

        /// An integer query argument clamped to `range`, or `fallback` when absent or not an integer.
        static func integer(_ context: RouteContext, _ name: String, _ fallback: Int, in range: ClosedRange<Int>) -> Int
        {
            min(max(context.query(name).flatMap { Int($0) } ?? fallback, range.lowerBound), range.upperBound)
        }
    }
#endif
