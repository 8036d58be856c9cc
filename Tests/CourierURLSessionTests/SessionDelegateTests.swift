import CourierCore
import Foundation
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
}

/// Addresses recorded by the handler, which must be `@Sendable`.
private final class DepthLog: Sendable {
    private let storage = LockedBox<[UInt]>([])

    func append(_ value: UInt) { storage.withLock { $0.append(value) } }
    var values: [UInt] { storage.withLock { $0 } }
}
