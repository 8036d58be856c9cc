#if OpenAPI
    public import CourierCore

    extension CourierTransport {
        /// How a ``CourierTransport`` maps generated operations onto Courier calls.
        ///
        /// ```swift
        /// var configuration = CourierTransport.Configuration()
        /// configuration.bufferedOperationIDs = ["getUser"]                  // read into memory, shared in flight
        /// configuration.decisions = [ValidateStatusDecision()]                // non-2xx throws instead
        /// let transport = CourierTransport(client: courier, configuration: configuration)
        /// ```
        public struct Configuration: Sendable {
            /// Decisions that run after the client's (redirect, token refresh, retry), for every operation. Default:
            /// none, so every status reaches the generated code, which reports a status its document does not list
            /// as `.undocumented`. Add `ValidateStatusDecision()` to turn non-2xx responses into
            /// `CourierError.Code.unacceptableStatus` instead.
            public var decisions: [any Decision]

            /// The operations whose response bodies are read into memory before the operation returns, by operation
            /// ID. Default: none (every body streams).
            ///
            /// In-flight de-duplication (`Client.Configuration.deduplicatesRequests`) applies only to these
            /// operations: concurrent identical GETs share one response, which a stream cannot be. Their bodies are
            /// bounded by `Client.Configuration.maxResponseBodySize` (`CourierError.Code.bodyTooLarge` beyond it).
            /// Courier's HTTP cache (`Client.Configuration.cache`) serves every operation either way; a streamed
            /// body is stored when the generated code has read it to its end, within
            /// `HTTPCache.maxStreamedBodySize`.
            public var bufferedOperationIDs: Set<String>

            /// Whether each call goes to the `serverURL` the generated client was created with. Default: `false`.
            ///
            /// When `false`, every operation goes to the Courier client's server for its current environment (so
            /// `client.switching(to: .staging)` moves every operation) and the generated server URL is not used.
            /// When `true`, it goes to the generated server URL: through the client's server with that base URL if
            /// it has one (its headers, TLS and proxy settings apply), else through a server for that URL in the
            /// client's environment.
            public var usesGeneratedServerURL: Bool

            /// A deadline for each operation, restarts included, until its response head. Default: `nil` (the
            /// client's `Client.Configuration.timeout`).
            public var timeout: Duration?

            /// Creates a configuration.
            ///
            /// - Parameters:
            ///   - decisions: Decisions after the client's, for every operation. Default: none.
            ///   - bufferedOperationIDs: Operations whose bodies are read into memory. Default: none.
            ///   - usesGeneratedServerURL: Whether calls go to the generated client's server URL. Default: `false`.
            ///   - timeout: A deadline per operation. Default: the client's.
            public init(
                decisions: [any Decision] = [],
                bufferedOperationIDs: Set<String> = [],
                usesGeneratedServerURL: Bool = false,
                timeout: Duration? = nil
            ) {
                self.decisions = decisions
                self.bufferedOperationIDs = bufferedOperationIDs
                self.usesGeneratedServerURL = usesGeneratedServerURL
                self.timeout = timeout
            }
        }
    }
#endif
