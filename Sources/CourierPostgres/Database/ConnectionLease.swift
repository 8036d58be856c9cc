#if Postgres
    import CourierCore
    import PostgresNIO

    /// Leases a connection with a deadline: PostgresClient's pool queues a request while it cannot connect (and only
    /// fails it once its circuit breaker trips, 15 seconds or more later), so a database that is down would hang a
    /// refresh, or a cached call. Past `timeout` without a connection the request is cancelled and fails with
    /// `CourierError.Code.credentialStoreFailed`; once leased, `body` runs without a deadline.
    enum ConnectionLease {
        static func with<T: Sendable>(
            _ client: PostgresClient,
            timeout: Duration,
            _ body: @escaping @Sendable (PostgresConnection) async throws -> T
        ) async throws -> T {
            let flag = LeaseFlag()
            let operation = Task {
                try await client.withConnection { connection in
                    guard await flag.lease() else { throw CancellationError() }
                    return try await body(connection)
                }
            }
            let watchdog = Task {
                try await Task.sleep(for: timeout)
                if await flag.expire() { operation.cancel() }
            }
            defer { watchdog.cancel() }
            do {
                return try await withTaskCancellationHandler {
                    try await operation.value
                } onCancel: {
                    operation.cancel()
                }
            } catch {
                if await flag.expired {
                    throw PostgresFailure.make(
                        "no PostgreSQL connection within \(timeout): the database is down or unreachable",
                        underlying: error)
                }
                throw error
            }
        }
    }

    /// Whether the connection was leased before the deadline; exactly one of ``lease()`` and ``expire()`` wins.
    private actor LeaseFlag {
        private(set) var leased = false
        private(set) var expired = false

        /// The connection arrived: `false` when the deadline passed first.
        func lease() -> Bool {
            if expired { return false }
            leased = true
            return true
        }

        /// The deadline passed: `true` when no connection had arrived.
        func expire() -> Bool {
            if leased { return false }
            expired = true
            return true
        }
    }
#endif
