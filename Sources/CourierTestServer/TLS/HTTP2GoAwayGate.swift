#if TestServer
    import NIOCore
    import NIOHTTP2

    /// Applies a ``TestServerTLS/GoAway`` to one HTTP/2 connection: admits or refuses each new stream, sends the
    /// `GOAWAY`, and closes the connection once the streams it admitted have ended.
    ///
    /// ``admit(_:)`` runs in each stream's initializer, in the order the streams arrive. The `GOAWAY` goes out one
    /// event-loop turn later, so that the triggering stream is fully set up before NIOHTTP2 drops it (for
    /// ``TestServerTLS/GoAway/refusingStream(_:)``) or finishes it. Sending a `GOAWAY` makes NIOHTTP2 itself drop the
    /// streams above its last stream ID and refuse any stream the client opens afterwards.
    final class HTTP2GoAwayGate: Sendable {
        private struct State {
            var arrived = 0
            var open = 0
            var lastAdmitted = HTTP2StreamID.rootStream
            /// Set as the triggering stream arrives: no stream is admitted after it.
            var goAwayDecided = false
            /// Set once the frame is written: only then may the connection close.
            var goAwayWritten = false
        }

        private let policy: TestServerTLS.GoAway
        private let connection: any Channel
        private let state = LockedBox(State())

        init(_ policy: TestServerTLS.GoAway, connection: any Channel) {
            self.policy = policy
            self.connection = connection
        }

        /// Whether `stream`, just opened by the client, is served; a refused stream gets no handlers and is never
        /// handed to a route. Called on the connection's event loop.
        func admit(_ stream: any Channel) -> Bool {
            let id = (try? stream.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)) ?? .rootStream
            let (admitted, goAway) = state.withLock { state -> (Bool, HTTP2StreamID?) in
                state.arrived += 1
                let admitted = !state.goAwayDecided && state.arrived <= policy.servedStreams
                if admitted {
                    state.open += 1
                    state.lastAdmitted = id
                }
                guard !state.goAwayDecided, state.arrived == policy.triggeringStream else { return (admitted, nil) }
                state.goAwayDecided = true
                return (admitted, state.lastAdmitted)
            }
            if admitted {
                stream.closeFuture.whenComplete { [self] _ in streamEnded() }
            }
            if let goAway {
                connection.eventLoop.execute { [self] in send(goAway) }
            }
            return admitted
        }

        private func send(_ lastStreamID: HTTP2StreamID) {
            let frame = HTTP2Frame(
                streamID: .rootStream,
                payload: .goAway(lastStreamID: lastStreamID, errorCode: .noError, opaqueData: nil)
            )
            connection.writeAndFlush(frame).whenComplete { [self] _ in
                state.withLock { $0.goAwayWritten = true }
                closeIfDone()
            }
        }

        private func streamEnded() {
            state.withLock { $0.open -= 1 }
            closeIfDone()
        }

        /// Closes the connection once the `GOAWAY` is out and every admitted stream has ended.
        private func closeIfDone() {
            let done = state.withLock { $0.goAwayWritten && $0.open == 0 }
            if done {
                connection.close(promise: nil)
            }
        }
    }
#endif
