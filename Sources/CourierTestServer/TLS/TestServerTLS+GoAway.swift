#if TestServer
    extension TestServerTLS {
        /// When the server ends an HTTP/2 connection with a graceful `GOAWAY` (error code `NO_ERROR`), as a server
        /// that caps the requests per connection or is being redeployed does.
        ///
        /// The `GOAWAY` names the last stream the server processes. Streams up to it are served to the end; streams
        /// above it are never processed (no route runs, ``TestServer/requestCount`` does not count them): the client
        /// learns they were refused from the `GOAWAY` itself, or from a `RST_STREAM` `REFUSED_STREAM` for a stream it
        /// opens after the server sent the `GOAWAY`. Once the served streams have ended, the server closes the
        /// connection, so the client must open a new one (see ``TestServer/connectionCount``).
        ///
        /// ```swift
        /// let tls = TestServerTLS(authority: authority, goAway: .afterStreams(5))
        /// ```
        public enum GoAway: Sendable, Hashable {
            /// As the `count`th stream of a connection arrives, `GOAWAY` naming it as the last stream.
            ///
            /// A client that waits for each response before the next request never has a stream refused; one that
            /// sends concurrently has the streams it opened before the `GOAWAY` reached it refused. Values below 1
            /// count as 1.
            case afterStreams(Int)

            /// Serves `count - 1` streams; when stream number `count` arrives, `GOAWAY` naming the one before as the
            /// last, so that stream — already sent by the client, in flight — is refused without being processed.
            ///
            /// Deterministic where ``afterStreams(_:)`` is racy: every connection has exactly one stream refused when
            /// the client sends `count` or more requests on it. `refusingStream(1)` refuses the first stream (the
            /// `GOAWAY` names stream 0). Values below 1 count as 1.
            case refusingStream(Int)

            /// How many streams a connection serves.
            var servedStreams: Int {
                switch self {
                case .afterStreams(let count): max(1, count)
                case .refusingStream(let count): max(1, count) - 1
                }
            }

            /// The 1-based arrival number of the stream whose arrival sends the `GOAWAY`.
            var triggeringStream: Int {
                switch self {
                case .afterStreams(let count): max(1, count)
                case .refusingStream(let count): max(1, count)
                }
            }
        }
    }
#endif
