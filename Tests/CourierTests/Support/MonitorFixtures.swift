import Courier
import Foundation
import HTTPTypes

/// Helpers for the event-monitor and activity suites.
enum MonitorFixtures {
    /// Keeps every event it handles; a test awaits the end of the calls it made.
    final class RecordingMonitor: EventMonitor {
        private let shared = DecisionFixtures.Shared<[CourierEvent]>([])
        private let stream: AsyncStream<CourierEvent>
        private let continuation: AsyncStream<CourierEvent>.Continuation

        init() {
            (stream, continuation) = AsyncStream.makeStream()
        }

        /// Every event handled so far, in order.
        var events: [CourierEvent] { shared.value }

        func handle(_ event: CourierEvent) async {
            shared.update { $0.append(event) }
            continuation.yield(event)
        }

        /// Waits until `count` calls have finished or failed, then returns every event so far. One waiter at a time.
        func events(untilCallsEnded count: Int) async -> [CourierEvent] {
            var ended = 0
            for await event in stream {
                if event.kind.isTerminal { ended += 1 }
                if ended == count { break }
            }
            return events
        }
    }

    /// A monitor that holds every event until ``open()`` is called: the slowest monitor there is.
    final class GatedMonitor: EventMonitor {
        private let gate: AsyncStream<Void>
        private let opener: AsyncStream<Void>.Continuation
        /// Yields the kind of each event handled (after the gate opened).
        let handledEvents: AsyncStream<CourierEvent.Kind>
        private let handled: AsyncStream<CourierEvent.Kind>.Continuation
        /// How many events were handled.
        let count = DecisionFixtures.Counter()

        init() {
            (gate, opener) = AsyncStream.makeStream()
            (handledEvents, handled) = AsyncStream.makeStream()
        }

        func open() { opener.finish() }

        func handle(_ event: CourierEvent) async {
            for await _ in gate {}
            count.next()
            handled.yield(event.kind)
        }
    }

    /// A transport gate: calls stop in the transport until released (or cancelled), and say when they got there.
    final class Turnstile: Sendable {
        private struct State {
            var released = false
            var next = 0
            var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        }

        let arrivals: AsyncStream<Void>
        private let arrived: AsyncStream<Void>.Continuation
        private let state = DecisionFixtures.Shared(State())

        init() {
            (arrivals, arrived) = AsyncStream.makeStream()
        }

        /// Called by the transport: announces the call, then waits for ``release()`` or cancellation.
        func pass() async throws {
            let id = state.update { state in
                state.next += 1
                return state.next
            }
            arrived.yield()
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = state.update { state -> Bool in
                        if state.released || Task.isCancelled { return true }
                        state.waiters[id] = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                state.update { $0.waiters.removeValue(forKey: id) }?.resume()
            }
            try Task.checkCancellation()
        }

        /// Lets every waiting and future call through.
        func release() {
            let waiters = state.update { state in
                state.released = true
                defer { state.waiters = [:] }
                return Array(state.waiters.values)
            }
            for waiter in waiters { waiter.resume() }
        }
    }
}

extension CourierEvent.Kind {
    /// Whether the call is over.
    var isTerminal: Bool {
        switch self {
        case .finished, .failed: true
        default: false
        }
    }

    /// The kind's name without its payload, such as `responseHead`.
    var name: String { String(describing: self).prefix { $0 != " " }.description }
}
