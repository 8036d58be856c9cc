import CourierCore
import Foundation
import HTTPTypes
import Testing

@testable import CourierURLSession

#if canImport(FoundationNetworking)
    import FoundationNetworking

    @Suite("URLSession transport watchdog")
    struct WatchdogTests {
        struct NotFired: Error {}

        /// A reader slower than the idle timeout holds the transfer back, and the idle timeout does not apply while
        /// it does. Once the reader has caught up, a server that goes silent must fail the body at the idle timeout,
        /// not at the next check an hour later.
        @Test("after a held-back transfer resumes, the idle timeout applies again")
        func idleTimeoutAfterResume() async throws {
            let lane = SessionLane(configuration: .ephemeral)
            defer { lane.invalidate() }
            let limits = ResponseTask.Limits(
                maxDecompressedBytes: 1 << 30,
                maxDecompressionRatio: 100,
                highWaterMark: 1_000,
                maxUnreadBytes: 1 << 20,
                connectTimeout: .seconds(10),
                idleTimeout: .milliseconds(300)
            )
            let url = try #require(URL(string: "http://127.0.0.1:9/body"))
            let task = ResponseTask(
                method: .get, url: url, limits: limits, deadline: nil, lane: lane, watchdog: Watchdog(),
                cancelUpload: nil)
            task.startTimers()
            let head = try #require(
                HTTPURLResponse(
                    url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Length": "100000"]))
            task.didReceive(response: head)
            // 3,000 unread bytes, over the high-water mark: the transfer is held back.
            for _ in 0..<3 { task.didReceive(data: Data(count: 1_000)) }

            // The reader is slower than the idle timeout: no failure for it.
            try await Task.sleep(for: .milliseconds(700))
            var read = 0
            for _ in 0..<3 { read += try #require(try await task.nextChunk()).count }
            #expect(read == 3_000)

            // Caught up; the server sends nothing more. The next read fails with idleTimeout, soon.
            let start = ContinuousClock.now
            let outcome = await withTaskGroup(of: Result<Void, any Error>.self) { group in
                group.addTask {
                    do {
                        _ = try await task.nextChunk()
                        return .success(())
                    } catch {
                        return .failure(error)
                    }
                }
                group.addTask {
                    // A bound on the test, not a synchronisation: the failure must come well before this.
                    try? await Task.sleep(for: .seconds(10))
                    return .failure(NotFired())
                }
                let first = await group.next() ?? .failure(NotFired())
                group.cancelAll()
                return first
            }
            let elapsed = ContinuousClock.now - start
            guard case .failure(let error) = outcome else {
                Issue.record("the body ended instead of failing")
                return
            }
            #expect((error as? CourierError)?.code == .idleTimeout, "got \(error)")
            // 0.3 s when the idle timeout applies again at once; without that, nothing within the 10 s bound (seen
            // when the resume no longer re-arms it). The margin is for a loaded CI machine (2.06 s seen once).
            #expect(elapsed < .seconds(8), "the idle timeout fired after \(elapsed)")
        }

        /// A request whose connect timeout (1 ms) has passed, with no timers running: the tests play the watchdog.
        static func unwatchedTask(lane: SessionLane) throws -> (ResponseTask, URL) {
            let limits = ResponseTask.Limits(
                maxDecompressedBytes: 1 << 30, maxDecompressionRatio: 100, highWaterMark: 1 << 20,
                maxUnreadBytes: 1 << 20, connectTimeout: .milliseconds(1), idleTimeout: nil)
            let url = try #require(URL(string: "http://127.0.0.1:9/body"))
            let task = ResponseTask(
                method: .get, url: url, limits: limits, deadline: nil, lane: lane, watchdog: Watchdog(),
                cancelUpload: nil)
            return (task, url)
        }

        /// The connect timeout passed without a head, so the watchdog probed the server; the probe's own connection
        /// failed, but the request's came through meanwhile and its head arrived. The request goes on.
        @Test("a connect probe that fails after the response head arrived does not fail the request")
        func probeLosesRaceWithHead() async throws {
            let lane = SessionLane(configuration: .ephemeral)
            defer { lane.invalidate() }
            let (task, url) = try Self.unwatchedTask(lane: lane)
            let head = try #require(
                HTTPURLResponse(
                    url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Length": "5"]))
            task.didReceive(response: head)
            #expect(!task.probeFailed())
            task.didReceive(data: Data("hello".utf8))
            task.didComplete(error: nil)
            let chunk = try await task.nextChunk()
            #expect(chunk.map { String(decoding: $0, as: UTF8.self) } == "hello")
        }

        /// The connect timeout passed without a head, and the watchdog's probe hangs (its name lookup waits for a
        /// slow resolver, which nothing bounds). The call's deadline still fires on time, not when the probe ends.
        @Test("the deadline fires while a connect probe hangs")
        func deadlineDuringProbe() async throws {
            let lane = SessionLane(configuration: .ephemeral)
            defer { lane.invalidate() }
            let probes = LockedBox(0)
            let watchdog = Watchdog { _, _, _ in
                probes.withLock { $0 += 1 }
                // A resolver that takes 10 s: the stand-in for a slow DNS server, not a synchronisation.
                try? await Task.sleep(for: .seconds(10))
                return false
            }
            let limits = ResponseTask.Limits(
                maxDecompressedBytes: 1 << 30, maxDecompressionRatio: 100, highWaterMark: 1 << 20,
                maxUnreadBytes: 1 << 20, connectTimeout: .milliseconds(1), idleTimeout: nil)
            let url = try #require(URL(string: "http://127.0.0.1:9/body"))
            let start = ContinuousClock.now
            let task = ResponseTask(
                method: .get, url: url, limits: limits, deadline: start + .milliseconds(400), lane: lane,
                watchdog: watchdog, cancelUpload: nil)
            task.startTimers()
            let error = await #expect(throws: CourierError.self) { _ = try await task.nextChunk() }
            let elapsed = ContinuousClock.now - start
            #expect(error?.code == .timedOut, "got \(String(describing: error))")
            #expect(probes.withLock { $0 } == 1, "the connect timeout probes once")
            // 0.4 s when the deadline is watched during the probe; 10 s (and connectTimeout) when it waits for the
            // probe. The margin is for a loaded CI machine.
            #expect(elapsed < .seconds(5), "the deadline fired after \(elapsed)")
        }

        @Test("before a head, a failed probe fails the request with connectTimeout")
        func probeFailsUnconnected() async throws {
            let lane = SessionLane(configuration: .ephemeral)
            defer { lane.invalidate() }
            let (task, _) = try Self.unwatchedTask(lane: lane)
            #expect(task.probeFailed())
            let error = await #expect(throws: CourierError.self) { _ = try await task.nextChunk() }
            #expect(error?.code == .connectTimeout)
        }
    }
#endif
