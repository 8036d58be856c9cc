import Foundation
import Testing

@testable import CourierCore

@Suite("RequestRegistry", .timeLimit(.minutes(1)))
struct RequestRegistryTests {
    /// Holds what a cancellation handler registered, for the test to look at afterwards.
    private final class Box: Sendable {
        let registration = LockedBox<RequestRegistry.Registration?>(nil)
    }

    @Test("cancel(where:) leaves a call that registered while it ran (from a cancellation handler) alone")
    func laterRegistrationsAreNotCancelled() async throws {
        let registry = RequestRegistry()
        let box = Box()
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        let call = Task {
            try await registry.run(tags: []) {
                try await withTaskCancellationHandler {
                    startedContinuation.yield()
                    try await Task.sleep(for: .seconds(60))
                } onCancel: {
                    // A call that starts while cancelAll() runs (a new screen's first load).
                    box.registration.withLock { $0 = registry.register(tags: []) }
                }
            }
        }
        var iterator = started.makeAsyncIterator()
        _ = await iterator.next()
        #expect(registry.cancel { _ in true } == 1)
        await #expect(throws: CancellationError.self) { try await call.value }
        let later = try #require(box.registration.withLock { $0 })
        #expect(!later.isCancelled)
        #expect(registry.count == 1)
    }

    @Test("a call's entry is made before its task starts: a cancel in between stops it before its operation runs")
    func cancelBeforeTheTaskStarts() async throws {
        let registry = RequestRegistry()
        let ticket = registry.enter(tags: ["screen"])
        #expect(registry.count == 1)
        #expect(registry.cancel { $0.contains("screen") } == 1)
        let ran = LockedBox(false)
        await #expect(throws: CancellationError.self) {
            try await registry.run(ticket) { ran.withLock { $0 = true } }
        }
        #expect(!ran.withLock { $0 })
        #expect(registry.count == 0)
    }

    @Test("a page sequence's registration is cancelled by cancel(where:) and removed when it goes")
    func registrationLifecycle() {
        let registry = RequestRegistry()
        var registration: RequestRegistry.Registration? = registry.register(tags: ["feed"])
        #expect(registry.count == 1)
        #expect(registry.cancel { $0.contains("other") } == 0)
        #expect(registration?.isCancelled == false)
        #expect(registry.cancel { $0.contains("feed") } == 1)
        #expect(registration?.isCancelled == true)
        registration = nil
        #expect(registry.count == 0)
    }
}
