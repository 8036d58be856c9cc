#if Postgres
    import CourierCore
    import PostgresNIO

    /// The errors CourierPostgres throws: `CourierError` with `CourierError.Code.credentialStoreFailed`, a message
    /// that says what was being done, and the database's own error (never a token or a key) as the underlying error.
    enum PostgresFailure {
        /// A failure of `what` (a sentence fragment such as "reading the credential \"github\"").
        static func make(_ what: String, underlying: (any Error)? = nil) -> CourierError {
            var message = what
            if let underlying { message += ": " + describe(underlying) }
            return CourierError(
                code: .credentialStoreFailed, stage: .decide, message: message, underlyingError: underlying)
        }

        /// Rethrows `error` from `what` as a `CourierError`, unless it already is one or is a cancellation.
        static func wrap(_ what: String, _ error: any Error) -> any Error {
            if error is CancellationError || error is CourierError { return error }
            return make(what, underlying: error)
        }

        /// A one-line account of a database error: PSQLError's own `description` hides everything, so this names
        /// the code and, for a server error, its SQLSTATE and message.
        static func describe(_ error: any Error) -> String {
            guard let error = error as? PSQLError else { return "\(error)" }
            var text = "PostgreSQL \(error.code)"
            if let state = error.serverInfo?[.sqlState] { text += " \(state)" }
            if let message = error.serverInfo?[.message] { text += " (\(message))" }
            if let underlying = error.underlying { text += " (\(underlying))" }
            return text
        }
    }
#endif
