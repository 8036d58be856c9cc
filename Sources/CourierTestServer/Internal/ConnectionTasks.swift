#if TestServer
    /// Runs `body`, which starts a child task for each connection (or HTTP/2 stream) with the function it is given,
    /// and returns when `body` has returned and every child has ended.
    ///
    /// A discarding task group where the system has one (macOS 14, iOS 17, tvOS 17, watchOS 10 and later; always on
    /// Linux): an ended child's task is freed at once. Before those, a plain task group, which keeps each ended
    /// child's (empty) result until the group ends: a few bytes per connection a test server served.
    func withConnectionTasks(
        _ body: (_ start: (@escaping @Sendable () async -> Void) -> Void) async throws -> Void
    ) async throws {
        if #available(macOS 14.0, iOS 17.0, watchOS 10.0, tvOS 17.0, *) {
            try await withThrowingDiscardingTaskGroup { group in
                try await body { child in group.addTask { await child() } }
            }
        } else {
            try await withThrowingTaskGroup(of: Void.self) { group in
                try await body { child in group.addTask { await child() } }
                try await group.waitForAll()
            }
        }
    }
#endif
