import CourierCore
import Foundation
import Testing

@testable import CourierURLSession

#if canImport(FoundationNetworking)
    import FoundationNetworking

    /// The delegate queue's turns, which let FoundationNetworking free a fast download's timers as it goes
    /// (`DeliveryQueue.takeTurn`): they depend on FoundationNetworking's private queues, found by reflection, so a
    /// toolchain that renames them fails here rather than silently keeping 50 MiB more per fast download.
    @Suite("URLSession delivery queue", .timeLimit(.minutes(1)))
    struct DeliveryQueueTests {
        /// Counts a download's bytes and reports its end.
        final class Downloader: NSObject, URLSessionDataDelegate, Sendable {
            private struct State {
                var bytes = 0
                var continuation: CheckedContinuation<Int, any Error>?
            }

            private let state = LockedBox(State())

            func download(_ url: URL, on session: URLSession) async throws -> Int {
                try await withCheckedThrowingContinuation { continuation in
                    state.withLock {
                        $0.bytes = 0
                        $0.continuation = continuation
                    }
                    session.dataTask(with: url).resume()
                }
            }

            func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
                state.withLock { $0.bytes += data.count }
            }

            func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
                let (bytes, continuation) = state.withLock { state in
                    defer { state.continuation = nil }
                    return (state.bytes, state.continuation)
                }
                if let error {
                    continuation?.resume(throwing: error)
                } else {
                    continuation?.resume(returning: bytes)
                }
            }
        }

        @Test("a lane's delivery queue finds FoundationNetworking's queues")
        func attaches() {
            let lane = SessionLane(configuration: .ephemeral)
            defer { lane.invalidate() }
            #expect(lane.deliveryQueue.isAttached)
        }

        @Test("an operation that adds one to its own queue is not held back by a pause or a full queue")
        func addingFromTheQueueItself() async throws {
            // Room for one queued operation and, once paused for a reader, a hold of up to 10 minutes (past the
            // suite's time limit) for a thread outside the queue. An operation of the queue itself must not wait:
            // it would wait for operations that run only after it.
            let queue = DeliveryQueue(maxPendingOperations: 1, maxStall: .seconds(600))
            defer { queue.invalidate() }
            let request = queue.begin()
            let paused = DispatchSemaphore(value: 0)
            let finished = DispatchSemaphore(value: 0)
            let ran = LockedBox<[String]>([])
            // Added before the pause, so this thread does not wait; it runs once the pause is in place.
            queue.addOperation {
                paused.wait()
                queue.addOperation { ran.withLock { $0.append("inner") } }
                queue.addOperation {
                    ran.withLock { $0.append("last") }
                    finished.signal()
                }
                ran.withLock { $0.append("outer") }
            }
            queue.pause(request)
            paused.signal()
            // Only a bound for the failure: held back, the operation would wait until the queue is invalidated.
            let finishedInTime = await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    continuation.resume(returning: finished.wait(timeout: .now() + 10) == .success)
                }
            }
            if !finishedInTime {
                queue.invalidate()
                finished.wait()
            }
            #expect(finishedInTime)
            #expect(ran.withLock { $0 } == ["outer", "inner", "last"])
        }

        @Test("a download takes a turn every 64 callbacks, gets every byte, and the next download on the session runs")
        func turnsDuringADownload() async throws {
            let server = try TestServer.start()
            defer { server.stop() }
            let queue = DeliveryQueue(maxPendingOperations: 64, maxStall: .seconds(1))
            let downloader = Downloader()
            let session = URLSession(configuration: .ephemeral, delegate: downloader, delegateQueue: queue)
            defer {
                queue.invalidate()
                session.finishTasksAndInvalidate()
            }
            queue.attach(to: session)
            let size = 8 << 20
            let url = try #require(URL(string: server.url("/zeros?n=\(size)")))

            #expect(try await downloader.download(url, on: session) == size)
            // At most 16 KiB a callback: at least 512 callbacks, so at least one turn in 64 of them.
            let turns = queue.turnsTaken
            #expect(turns >= 1)
            // A turn always ends (the multi-handle queue is resumed): the same session downloads again.
            #expect(try await downloader.download(url, on: session) == size)
            #expect(queue.turnsTaken > turns)
        }
    }
#endif
