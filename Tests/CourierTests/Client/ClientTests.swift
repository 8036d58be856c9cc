import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("Client", .timeLimit(.minutes(1)))
struct ClientTests {
    @Test("the seeds' POST: form body in, typed response out")
    func sendsTypedFormPost() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.post, "/post") { recorded in
            .json(["form": ["foo": recorded.bodyText ?? ""]])
        }
        let value = try await client.send(HTTPBinPost(foo: "bar"))
        #expect(value.form.foo == "foo=bar")
        let sent = try #require(mock.recordedRequests.first)
        #expect(sent.head.method == .post)
        #expect(sent.head.headerFields[.contentType] == "application/x-www-form-urlencoded")
        #expect(sent.head.headerFields[.contentLength] == "7")
        #expect(sent.head.headerFields[.userAgent]?.hasPrefix("Courier/") == true)
        #expect(sent.head.authority == "api.example.com")
        #expect(sent.head.scheme == "https")
    }

    @Test("a GET with a query reaches the path with the query encoded")
    func sendsQuery() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/get", with: .json(["args": ["foo": "a b+c"]]))
        let value = try await client.send(HTTPBinGet(foo: "a b+c"))
        #expect(value.args["foo"] == "a b+c")
        #expect(mock.recordedRequests.first?.head.path == "/get?foo=a%20b%2Bc")
    }

    @Test("the completion form delivers the result once and can be cancelled")
    func completionForm() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.post, "/post", with: .json(raw: #"{"form":{"foo":"bar"}}"#))
        let result = await withCheckedContinuation { continuation in
            client.send(HTTPBinPost(foo: "bar")) { continuation.resume(returning: $0) }
        }
        #expect(try result.get().form.foo == "bar")

        mock.stub(.get, "/probe", with: .status(200, fault: .stall))
        let cancelled = await withCheckedContinuation { continuation in
            let task = client.send(Probe()) { continuation.resume(returning: $0) }
            task.cancel()
            #expect(task.isCancelled)
        }
        #expect(throws: CancellationError.self) { try cancelled.get() }
    }

    @Test("Task cancellation while the transport stalls returns CancellationError")
    func cancellationDuringTransport() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .status(200, fault: .stall))
        let task = Task { try await client.send(Probe()) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test("cancellation mid-body returns CancellationError")
    func cancellationMidBody() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .text("0123456789", fault: .stallBody(afterBytes: 3)))
        let task = Task { try await client.send(Probe()) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test("a deadline ends a stalled call with timedOut")
    func deadline() async throws {
        let (client, mock) = Fixtures.client { $0.timeout = .milliseconds(50) }
        mock.stub(.get, "/probe", with: .status(200, fault: .stall))
        let error = await expectCourierError { try await client.send(Probe()) }
        #expect(error?.code == .timedOut)
        #expect(error?.stage == .transport)
    }

    /// An adapter that waits until the test lets it go and ignores cancellation meanwhile, as a token provider
    /// awaiting an uncancellable API does.
    final class StubbornAdapter: RequestAdapter {
        private let state = LockedBox((released: false, waiting: [CheckedContinuation<Void, Never>]()))
        var name: String { "stubborn" }
        var isReleased: Bool { state.withLock { $0.released } }

        func adapt(_ request: OutgoingRequest, context: AdapterContext) async throws -> OutgoingRequest {
            await withCheckedContinuation { continuation in
                let go = state.withLock { state -> Bool in
                    if !state.released { state.waiting.append(continuation) }
                    return state.released
                }
                if go { continuation.resume() }
            }
            return request
        }

        func release() {
            let waiting = state.withLock { state in
                state.released = true
                defer { state.waiting = [] }
                return state.waiting
            }
            for continuation in waiting { continuation.resume() }
        }
    }

    @Test("a deadline ends the call while a step ignores cancellation; the step finishes in the background, unseen")
    func deadlineWithAStubbornStep() async throws {
        let stubborn = StubbornAdapter()
        let recorder = MonitorFixtures.RecordingMonitor()
        let (client, mock) = Fixtures.client {
            $0.timeout = .milliseconds(100)
            $0.adapters.append(stubborn)
            $0.maxConcurrentRequests = 1  // the second call goes once the first one's attempts let the slot go
            $0.monitors = [recorder]
        }
        mock.stub(.get, "/probe", with: .text("ok"))
        // A bound, not a synchronisation: where the deadline waits for the step, the call ends only when this lets
        // the step go, and the expectations below fail.
        let watchdog = Task {
            try? await Task.sleep(for: .seconds(10))
            stubborn.release()
        }
        defer { watchdog.cancel() }
        let started = ContinuousClock.now
        let error = await expectCourierError { try await client.send(Probe()) }
        #expect(!stubborn.isReleased, "the call waited for the step instead of ending at its deadline")
        #expect(error?.code == .timedOut)
        #expect(error?.stage == .adapt)
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(client.callsInFlight == 0)

        // The step ends; its attempt, cancelled, sends nothing and gives the slot to the next call.
        stubborn.release()
        #expect(try await client.send(Probe()) == "ok")
        #expect(mock.recordedRequests.count == 1)
        let events = await recorder.events(untilCallsEnded: 2)
        let first = try #require(events.first?.callID)
        let ofFirst = events.filter { $0.callID == first }.map(\.kind)
        #expect(ofFirst.last?.isTerminal == true, "an event of the first call came after its end: \(ofFirst)")
        #expect(!ofFirst.contains { if case .adapted = $0 { true } else { false } }, "\(ofFirst)")
    }

    /// Waits until the task it runs in is escalated to `.high` or above, and records whether it was (false after a
    /// 10-second bound, not a synchronisation: the test fails then).
    @available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *)
    final class EscalationProbe: RequestAdapter {
        private let state = LockedBox(
            (entered: [CheckedContinuation<Void, Never>](), isIn: false, escalated: nil as Bool?))
        var name: String { "escalation" }
        var escalated: Bool? { state.withLock { $0.escalated } }

        /// Returns once the adapter runs.
        func entered() async {
            await withCheckedContinuation { continuation in
                let isIn = state.withLock { state -> Bool in
                    if !state.isIn { state.entered.append(continuation) }
                    return state.isIn
                }
                if isIn { continuation.resume() }
            }
        }

        func adapt(_ request: OutgoingRequest, context: AdapterContext) async throws -> OutgoingRequest {
            let (escalated, stream) = AsyncStream<Bool>.makeStream()
            let seen = await withTaskPriorityEscalationHandler {
                for waiter in state.withLock({ state in
                    state.isIn = true
                    defer { state.entered = [] }
                    return state.entered
                }) { waiter.resume() }
                if Task.currentPriority >= .high { return true }
                let bound = Task {
                    try? await Task.sleep(for: .seconds(10))
                    stream.yield(false)
                }
                defer { bound.cancel() }
                var iterator = escalated.makeAsyncIterator()
                return await iterator.next() ?? false
            } onPriorityEscalated: { _, priority in
                if priority >= .high { stream.yield(true) }
            }
            state.withLock { $0.escalated = seen }
            return request
        }
    }

    @available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *)
    @Test("a call with a deadline is escalated with the task that awaits it")
    func deadlineCallIsEscalated() async throws {
        let probe = EscalationProbe()
        let (client, mock) = Fixtures.client {
            $0.timeout = .seconds(30)
            $0.adapters.append(probe)
        }
        mock.stub(.get, "/probe", with: .text("ok"))
        let low = Task(priority: .low) { try await client.send(Probe()) }
        await probe.entered()
        let high = Task(priority: .high) { try await low.value }  // awaiting a task escalates it
        #expect(try await high.value == "ok")
        #expect(probe.escalated == true)
    }

    /// Cancels the call it adapts, and returns as if nothing happened.
    struct CancellingAdapter: RequestAdapter {
        var name: String { "cancelling" }
        func adapt(_ request: OutgoingRequest, context: AdapterContext) async throws -> OutgoingRequest {
            withUnsafeCurrentTask { $0?.cancel() }
            return request
        }
    }

    @Test("a call cancelled while its last adapter runs sends nothing")
    func cancelledDuringTheLastAdapter() async throws {
        let (client, mock) = Fixtures.client { $0.adapters.append(CancellingAdapter()) }
        mock.stub(.get, "/probe", with: .text("ok"))
        await #expect(throws: CancellationError.self) { try await client.send(Probe()) }
        #expect(mock.recordedRequests.isEmpty)
    }

    @Test("environments: switched per client and overridden per request")
    func environments() async throws {
        let mock = MockTransport()
        let production = Server(baseURL: URL(string: "https://api.example.com/v1")!, environment: .production)
        let staging = Server(
            baseURL: URL(string: "https://staging.example.com/v1")!,
            environment: .staging,
            headers: ["X-Env": "staging"]
        )
        let client = Client(servers: [production, staging], environment: .production, transport: mock)
        mock.stub(nil, "/v1/probe", handler: { _ in .text("ok") })

        _ = try await client.send(Probe())
        _ = try await client.switching(to: .staging).send(Probe())
        var perRequest = Probe()
        perRequest.environment = .staging
        _ = try await client.send(perRequest)
        var upload = Probe()
        upload.server = Server(baseURL: URL(string: "https://upload.example.com")!)
        upload.path = "/v1/probe"
        _ = try await client.send(upload)

        let authorities = mock.recordedRequests.map(\.head.authority)
        #expect(authorities == ["api.example.com", "staging.example.com", "staging.example.com", "upload.example.com"])
        #expect(mock.recordedRequests[1].head.headerFields[HTTPField.Name("X-Env")!] == "staging")
        #expect(mock.recordedRequests[0].head.headerFields[HTTPField.Name("X-Env")!] == nil)

        var missing = Probe()
        missing.environment = .local
        let error = await expectCourierError { try await client.send(missing) }
        #expect(error?.code == .invalidURL)
        #expect(error?.stage == .resolve)
    }

    @Test("a custom request replaces adapters and decisions wholesale")
    func customRequest() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.put, "/anything", with: .text("teapot", status: 418))
        let value = try await client.send(CustomRequest())
        #expect(value == "teapot")  // no validateStatus: a 418 passes
        let sent = try #require(mock.recordedRequests.first)
        #expect(sent.head.method == .put)
        #expect(sent.head.headerFields[HTTPField.Name("X-Custom")!] == "1")
    }

    @Test("the base URL's path prefix is kept")
    func basePathPrefix() async throws {
        let (client, mock) = Fixtures.client(baseURL: URL(string: "https://api.example.com/v2/")!)
        mock.stub(.get, "/v2/probe", with: .text("ok"))
        #expect(try await client.send(Probe()) == "ok")
    }

    @Test(
        "an empty path is the base URL itself; a slash asks for the slash",
        arguments: [
            ("https://api.example.com/graphql", "", "/graphql"), ("https://api.example.com/graphql/", "", "/graphql"),
            ("https://api.example.com/graphql", "/", "/graphql/"), ("https://api.example.com", "", "/"),
            ("https://api.example.com/v2", "users", "/v2/users"),
        ])
    func emptyPath(baseURL: String, path: String, sent: String) async throws {
        let (client, mock) = Fixtures.client(baseURL: try #require(URL(string: baseURL)))
        mock.stub(nil, sent, with: .text("ok"))
        #expect(try await client.send(Probe(path: path)) == "ok")
        #expect(mock.recordedRequests.first?.head.path == sent)
    }

    @Test("concurrent calls on one client do not mix up their responses")
    func concurrentCalls() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/echo") { recorded in .text(recorded.query ?? "") }
        let values = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for index in 0..<50 {
                group.addTask {
                    var probe = Probe(path: "/echo")
                    probe.query = ["n": index]
                    return (index, try await client.send(probe))
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        #expect(values.count == 50)
        #expect(values.allSatisfy { $0.value == "n=\($0.key)" })
    }
}
