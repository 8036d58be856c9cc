import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Logging
import Testing

/// Events for each stage of a call, delivered to monitors off the request path.
@Suite("EventMonitor", .timeLimit(.minutes(1)))
struct EventMonitorTests {
    @Test("a successful call: started → adapted → sent → responseHead → decisions → finished, one call ID")
    func successfulCall() async throws {
        let monitor = MonitorFixtures.RecordingMonitor()
        let (client, mock) = Fixtures.client { $0.monitors = [monitor] }
        mock.stub(.post, "/post", with: .json(raw: #"{"form":{"foo":"bar"}}"#))
        _ = try await client.send(HTTPBinPost(foo: "bar"))

        let events = await monitor.events(untilCallsEnded: 1)
        #expect(
            events.map(\.kind.name) == [
                "started", "adapted", "sent", "responseHead", "decision", "decision", "finished",
            ],
            "\(events.map(\.description))"
        )
        #expect(Set(events.map(\.callID)).count == 1)
        #expect(events.allSatisfy { $0.requestName == "HTTPBinPost" && $0.method == .post })
        #expect(events.allSatisfy { $0.environment == .production })
        #expect(events.map(\.elapsed) == events.map(\.elapsed).sorted())
        guard case .adapted(let head) = events[1].kind else { throw Failure("no adapted event") }
        #expect(head.path == "/post")
        guard case .responseHead(let response) = events[3].kind else { throw Failure("no responseHead event") }
        #expect(response.status == .ok)
        guard case .finished(let status, let duration, let bytes) = try #require(events.last).kind else {
            throw Failure("no finished event")
        }
        #expect(status == .ok)
        #expect(bytes == 22)
        #expect(duration >= events[3].elapsed)
        let decisions = events.compactMap { event -> String? in
            guard case .decision(let step) = event.kind else { return nil }
            return "\(step.name) \(step.outcome)"
        }
        #expect(decisions == ["validateStatus succeeded", "parse succeeded"])
    }

    @Test("a retried call reports the retry with its delay, and the second attempt's events")
    func retriedCall() async throws {
        let monitor = MonitorFixtures.RecordingMonitor()
        let clock = DecisionFixtures.RecordingClock()
        let (client, mock) = Fixtures.client {
            $0.monitors = [monitor]
            $0.clock = clock
            $0.retryPolicy = RetryPolicy(maxRetries: 1, backoff: .constant(.milliseconds(250)))
        }
        mock.stub(.get, "/probe", with: [.status(503), .text("ok")])
        #expect(try await client.send(Probe()) == "ok")

        let events = await monitor.events(untilCallsEnded: 1)
        let retries = events.compactMap { event -> (Int, Duration)? in
            guard case .retried(let delay) = event.kind else { return nil }
            return (event.attempt, delay)
        }
        #expect(retries.map(\.0) == [1])
        #expect(retries.map(\.1) == [.milliseconds(250)])
        #expect(clock.sleeps == [.milliseconds(250)])
        let heads = events.compactMap { event -> String? in
            guard case .responseHead(let head) = event.kind else { return nil }
            return "\(event.attempt):\(head.status.code)"
        }
        #expect(heads == ["1:503", "2:200"])
        #expect(events.filter { $0.kind.name == "sent" }.map(\.attempt) == [1, 2])
        guard case .finished(let status, _, _) = try #require(events.last).kind else { throw Failure("not finished") }
        #expect(status == .ok)
        #expect(try #require(events.last).attempt == 2)
    }

    @Test("a call whose token was refreshed reports refreshed after its first attempt, then a second attempt")
    func refreshedCall() async throws {
        let harness = try await AuthFixtures.harness()
        AuthFixtures.stubTokenEndpoint(harness.mock)
        AuthFixtures.stubAPI(harness.mock, accepting: { "access-2" })
        let monitor = MonitorFixtures.RecordingMonitor()
        let client = harness.client.configured { $0.monitors = [monitor] }
        #expect(try await client.send(Probe()) == "ok")

        let events = await monitor.events(untilCallsEnded: 1)
        let names = events.map { "\($0.attempt):\($0.kind.name)" }
        let refreshed = try #require(names.firstIndex(of: "1:refreshed"), "\(names)")
        #expect(names[..<refreshed].contains("1:responseHead"))
        #expect(names[refreshed...].contains("2:sent"))
        #expect(names.last == "2:finished")
        #expect(names.filter { $0.hasSuffix(":refreshed") }.count == 1)
    }

    @Test("a failed call ends with a failed event carrying the CourierError and the status")
    func failedCall() async throws {
        let monitor = MonitorFixtures.RecordingMonitor()
        let (client, mock) = Fixtures.client { $0.monitors = [monitor] }
        mock.stub(.get, "/probe", with: .status(404))
        let thrown = await expectCourierError { try await client.send(Probe()) }

        let events = await monitor.events(untilCallsEnded: 1)
        guard case .failed(let error, let status, _) = try #require(events.last).kind else {
            throw Failure("not failed: \(events.map(\.description))")
        }
        #expect(status == .notFound)
        #expect((error as? CourierError)?.code == .unacceptableStatus)
        #expect("\(error)" == thrown.map { "\($0)" })
        #expect(events.filter(\.kind.isTerminal).count == 1)
    }

    @Test("a call that fails before sending still starts and fails; a cancelled one fails with CancellationError")
    func failureBeforeSendingAndCancellation() async throws {
        let monitor = MonitorFixtures.RecordingMonitor()
        let turnstile = MonitorFixtures.Turnstile()
        let (client, mock) = Fixtures.client {
            $0.monitors = [monitor]
            $0.adapters.append(
                .custom("explode") { request, _ in
                    if request.head.path == "/explode" { throw DecisionFixtures.Failure(reason: "adapter") }
                    return request
                })
        }
        mock.stub(.get, "/probe") { _ in
            try await turnstile.pass()
            return .text("late")
        }
        _ = await expectCourierError { try await client.send(Probe(path: "/explode")) }

        let task = Task { try await client.send(Probe()) }
        var arrivals = turnstile.arrivals.makeAsyncIterator()
        await arrivals.next()
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }

        let events = await monitor.events(untilCallsEnded: 2)
        let byCall = Dictionary(grouping: events, by: \.callID).values.sorted {
            $0[0].callID.rawValue < $1[0].callID.rawValue
        }
        #expect(byCall.count == 2)
        #expect(!byCall[0].contains { $0.kind.name == "sent" })
        guard case .failed(let adapterError, nil, _) = try #require(byCall[0].last).kind else {
            throw Failure("first call did not fail without a status")
        }
        #expect((adapterError as? CourierError)?.code == .adapterFailed)
        guard case .failed(let cancellation, _, _) = try #require(byCall[1].last).kind else {
            throw Failure("second call did not fail")
        }
        #expect(cancellation is CancellationError)
    }

    @Test("adapters see the call ID of the events when monitors are set, and none without monitors")
    func callIDInAdapterContext() async throws {
        let seen = DecisionFixtures.Shared<[CourierEvent.CallID?]>([])
        let recordID = ClosureAdapter(name: "recordID") { request, context in
            seen.update { $0.append(context.callID) }
            return request
        }
        let monitor = MonitorFixtures.RecordingMonitor()
        let (monitored, mock) = Fixtures.client {
            $0.monitors = [monitor]
            $0.adapters.append(recordID)
        }
        mock.stub(.get, "/probe", with: [.text("a"), .text("b")])
        _ = try await monitored.send(Probe())
        let plain = monitored.configured {
            $0.monitors = []
            $0.adapters = [recordID]
        }
        _ = try await plain.send(Probe())

        let events = await monitor.events(untilCallsEnded: 1)
        #expect(seen.value == [events.first?.callID, nil])
        #expect(plain.droppedMonitorEvents == 0)
    }

    /// A client answering `/probe` with a monitor that handles nothing until opened, and `capacity` events of buffer.
    private static func stuckMonitorClient(capacity: Int) -> (Client, MonitorFixtures.GatedMonitor) {
        let slow = MonitorFixtures.GatedMonitor()
        let (client, mock) = Fixtures.client {
            $0.monitors = [slow]
            $0.monitorBufferCapacity = capacity
        }
        mock.stub(.get, "/probe", handler: { _ in .text("ok") })
        return (client, slow)
    }

    @Test("a stuck monitor does not slow calls: middle events are dropped first, ends up to twice the capacity")
    func slowMonitorDropsInsteadOfBlocking() async throws {
        let (client, slow) = Self.stuckMonitorClient(capacity: 4)
        for _ in 0..<20 {
            #expect(try await client.send(Probe()) == "ok")
        }
        #expect(slow.count.count == 0)
        // 7 events per call; the monitor holds one, and its buffer at most 8: 4 of any kind, then only calls' ends.
        let dropped = client.droppedMonitorEvents
        #expect(dropped >= 20 * 7 - 1 - 8, "dropped \(dropped)")

        slow.open()
        var ends = 0
        var handled = 0
        for await kind in slow.handledEvents {
            handled += 1
            if kind.isTerminal { ends += 1 }
            if handled + dropped == 20 * 7 { break }
        }
        #expect(handled + dropped == 20 * 7)
        #expect(ends >= 4, "the buffer kept \(ends) ends")
    }

    @Test("a monitor stuck for 2,000 calls holds at most twice its capacity: memory stays bounded")
    func stuckMonitorIsBounded() async throws {
        let (client, slow) = Self.stuckMonitorClient(capacity: 16)
        for _ in 0..<2_000 { _ = try await client.send(Probe()) }
        // Every event but the one the monitor holds and the 32 its buffer may keep was dropped.
        #expect(client.droppedMonitorEvents >= 2_000 * 7 - 1 - 32, "dropped \(client.droppedMonitorEvents)")
        slow.open()
    }

    @Test("the cache hook's outcomes print as hit, revalidated, miss and stored")
    func cacheOutcomeNames() {
        let names = [CourierEvent.CacheOutcome.hit, .revalidated, .miss, .stored].map(\.description)
        #expect(names == ["hit", "revalidated", "miss", "stored"])
        let event = CourierEvent(
            callID: .init(rawValue: 7), requestName: "GetUser", method: .get, environment: .staging, attempt: 1,
            kind: .cached(.hit))
        #expect(event.description == "#7 GetUser attempt 1: cached hit")
    }

    private struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
