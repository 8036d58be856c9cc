import CourierTestServer

/// Runs `body` with a fresh embedded server, and shuts it down whatever happens.
func withTestServer(_ body: (TestServer) async throws -> Void) async throws {
    let server = try await TestServer.start()
    do {
        try await body(server)
        try await server.shutdown()
    } catch {
        try? await server.shutdown()
        throw error
    }
}
