import CourierCore
import Foundation
import HTTPTypes
import Testing

@testable import CourierURLSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("URLSession session delegate")
struct SessionDelegateTests {
    /// The lane's completion handler runs once per request for the lane's whole life. Stored as a bare function type
    /// in a `LockedBox`, each read wrapped it in two more reabstraction thunks, so the n-th request ran through 2n of
    /// them: the handler was called deeper in the stack every time.
    @Test("the completion handler is called at the same depth on every request, however many there were")
    func completionHandlerDoesNotGrow() throws {
        let delegate = SessionDelegate()
        let depths = DepthLog()
        delegate.onTaskComplete {
            var marker = 0
            let address = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
            depths.append(address)
        }
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: try #require(URL(string: "http://127.0.0.1:9/")))
        for _ in 0..<2_000 {
            delegate.urlSession(session, task: task, didCompleteWithError: nil)
        }
        let recorded = depths.values
        try #require(recorded.count == 2_000)
        // The same call site on the same thread: the same stack address, unless thunks pile up in between (2,000
        // requests would add about 4,000 frames, tens of kilobytes).
        let first = try #require(recorded.first)
        let last = try #require(recorded.last)
        #expect(first == last, "the handler ran \(Int(first) - Int(last)) bytes deeper after 2,000 requests")
    }

    /// `shutdown()` fails the requests its lanes have; a request that had checked out its lane just before, but had
    /// not yet registered its task, used to start it afterwards and run as if nothing had happened.
    @Test("a request registered on a lane after its requests were failed fails at once, its task never started")
    func registrationAfterFailAllFails() async throws {
        let lane = SessionLane(configuration: .ephemeral)
        defer { lane.invalidate() }
        let limits = ResponseTask.Limits(
            maxDecompressedBytes: 1 << 20, maxDecompressionRatio: 100, highWaterMark: 1_000, maxUnreadBytes: 1 << 20,
            connectTimeout: .seconds(10), idleTimeout: .seconds(10))
        let url = try #require(URL(string: "http://127.0.0.1:9/late"))
        let responseTask = ResponseTask(
            method: .get, url: url, limits: limits, deadline: nil, lane: lane, watchdog: Watchdog(),
            cancelUpload: nil)
        lane.delegate.failAll(CourierError(code: .transportFailed, stage: .transport, message: "shut down"))

        let task = lane.session.dataTask(with: url)
        let outcome: Result<HTTPResponse, any Error> = await withCheckedContinuation { done in
            Task {
                do {
                    let head = try await withCheckedThrowingContinuation { continuation in
                        lane.delegate.register(responseTask, for: task)
                        responseTask.start(task, continuation: continuation)
                    }
                    done.resume(returning: .success(head))
                } catch {
                    done.resume(returning: .failure(error))
                }
            }
        }
        guard case .failure(let error) = outcome else {
            Issue.record("the request ran after its lane's requests were failed")
            return
        }
        #expect((error as? CourierError)?.message == "shut down")
        #expect(task.state != .running, "the task was never resumed")
    }
}

/// Addresses recorded by the handler, which must be `@Sendable`.
private final class DepthLog: Sendable {
    private let storage = LockedBox<[UInt]>([])

    func append(_ value: UInt) { storage.withLock { $0.append(value) } }
    var values: [UInt] { storage.withLock { $0 } }
}
