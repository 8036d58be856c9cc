import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// Helpers for the jobs, groups, cancellation and pagination suites.
enum JobFixtures {
    /// Parks the transport's calls until the test releases them, and measures how many were parked at once.
    ///
    /// `enter()` is called from a `MockTransport` handler; it reports the arrival on ``arrivals`` and suspends
    /// until ``release(_:)`` (or cancellation) lets it go. The maximum concurrency is measured here, at the
    /// transport, not inferred from timings.
    final class Gate: Sendable {
        private struct Waiter {
            let id: String
            let continuation: CheckedContinuation<Bool, Never>
        }

        private struct State {
            var inFlight = 0
            var maxInFlight = 0
            var waiters: [Waiter] = []
            var cancelled: Set<String> = []
        }

        private let state = LockedBox(State())
        private let arrivalContinuation: AsyncStream<String>.Continuation
        /// The IDs of the calls as they arrive.
        let arrivals: AsyncStream<String>

        init() {
            (arrivals, arrivalContinuation) = AsyncStream.makeStream()
        }

        /// The most calls parked at the same time.
        var maxInFlight: Int { state.withLock { $0.maxInFlight } }

        /// The calls parked now.
        var parked: [String] { state.withLock { $0.waiters.map(\.id) } }

        /// Parks the caller until released; returns `false` when it was cancelled instead.
        @discardableResult
        func enter(_ id: String) async -> Bool {
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let cancelledAlready = state.withLock { state -> Bool in
                        if state.cancelled.remove(id) != nil { return true }
                        state.inFlight += 1
                        state.maxInFlight = max(state.maxInFlight, state.inFlight)
                        state.waiters.append(Waiter(id: id, continuation: continuation))
                        return false
                    }
                    if cancelledAlready {
                        continuation.resume(returning: false)
                    } else {
                        arrivalContinuation.yield(id)
                    }
                }
            } onCancel: {
                let waiter = state.withLock { state -> Waiter? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else {
                        state.cancelled.insert(id)
                        return nil
                    }
                    state.inFlight -= 1
                    return state.waiters.remove(at: index)
                }
                waiter?.continuation.resume(returning: false)
            }
        }

        /// Releases the parked call with `id`, or the oldest one when `id` is `nil`.
        func release(_ id: String? = nil) {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = id.map({ id in state.waiters.firstIndex { $0.id == id } }) ?? 0,
                    index < state.waiters.count
                else { return nil }
                state.inFlight -= 1
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(returning: true)
        }
    }

    /// Waits for `count` arrivals on `iterator`.
    static func waitFor(_ count: Int, on iterator: inout AsyncStream<String>.Iterator) async -> [String] {
        var ids: [String] = []
        while ids.count < count, let id = await iterator.next() { ids.append(id) }
        return ids
    }

    /// A GET for `/items/<index>` that returns the body as text.
    static func item(_ index: Int) -> Probe<String> {
        Probe(path: "/items/\(index)")
    }

    /// A mock that parks every `/items/<n>` call at `gate`, then answers `item <n>`.
    static func gatedClient(_ gate: Gate) -> (Client, MockTransport) {
        let (client, mock) = Fixtures.client()
        for index in 0..<20 {
            mock.stub(.get, "/items/\(index)") { _ in
                guard await gate.enter("\(index)") else { throw CancellationError() }
                return .text("item \(index)")
            }
        }
        return (client, mock)
    }
}
