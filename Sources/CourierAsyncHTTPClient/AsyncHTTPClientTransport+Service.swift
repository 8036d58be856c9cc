#if AsyncHTTPClient
    public import ServiceLifecycle

    extension AsyncHTTPClientTransport: Service {
        /// Runs until graceful shutdown (or cancellation), then shuts down the client this transport owns (see
        /// ``shutdown()``): add the transport to your server's `ServiceGroup` so that it stops with the app.
        public func run() async throws {
            try? await gracefulShutdown()
            try await shutdown()
        }
    }
#endif
