import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("Jobs: grouped requests", .timeLimit(.minutes(1)))
struct GroupTests {
    /// Drives `count` gated calls with at most `limit` parked at once: waits until the group has filled every
    /// slot it should, then releases the oldest call, until all are done. A group that starts fewer calls than
    /// it may would hang here (and fail on the time limit); one that starts more shows in `maxInFlight`.
    private static func drive(_ gate: JobFixtures.Gate, count: Int, limit: Int) async {
        var arrivals = gate.arrivals.makeAsyncIterator()
        var arrived = 0
        var released = 0
        while released < count {
            let slots = min(limit, count - released)
            arrived += await JobFixtures.waitFor(max(0, slots - (arrived - released)), on: &arrivals).count
            gate.release()
            released += 1
        }
    }

    @Test(
        "sendAll keeps at most maxConcurrent requests in flight and returns responses in input order",
        arguments: [1, 3, 10])
    func concurrencyLimit(limit: Int) async throws {
        let gate = JobFixtures.Gate()
        let (client, mock) = JobFixtures.gatedClient(gate)
        let requests = (0..<10).map(JobFixtures.item)
        async let responses = client.sendAll(requests, maxConcurrent: limit)
        await Self.drive(gate, count: 10, limit: limit)
        #expect(try await responses == (0..<10).map { "item \($0)" })
        #expect(gate.maxInFlight == limit)
        #expect(mock.recordedRequests.count == 10)
        #expect(client.callsInFlight == 0)
    }

    @Test("responses come back in input order even when the requests finish in reverse")
    func inputOrder() async throws {
        let gate = JobFixtures.Gate()
        let (client, _) = JobFixtures.gatedClient(gate)
        async let results = client.sendAllResults((0..<5).map(JobFixtures.item), maxConcurrent: 5)
        var arrivals = gate.arrivals.makeAsyncIterator()
        _ = await JobFixtures.waitFor(5, on: &arrivals)
        for index in (0..<5).reversed() { gate.release("\(index)") }
        let values = await results.map { try? $0.get() }
        #expect(values == (0..<5).map { "item \($0)" })
    }

    @Test("fail fast: the first failure is thrown, the requests in flight are cancelled, no more start")
    func failFast() async throws {
        let gate = JobFixtures.Gate()
        let (client, mock) = JobFixtures.gatedClient(gate)
        mock.stub(.get, "/broken", with: .status(500))
        var requests = (0..<6).map(JobFixtures.item)
        requests.insert(Probe(path: "/broken"), at: 2)
        let error = try #require(await expectCourierError { try await client.sendAll(requests, maxConcurrent: 3) })
        #expect(error.code == .unacceptableStatus && error.response?.status.code == 500)
        #expect(gate.parked.isEmpty)  // whatever was parked was cancelled, not released
        // Only the first three were started (items 0 and 1 possibly cancelled before reaching the transport).
        let sent = Set(mock.recordedRequests.map(\.pathWithoutQuery))
        #expect(sent.contains("/broken") && sent.isSubset(of: ["/broken", "/items/0", "/items/1"]))
        #expect(client.callsInFlight == 0)
    }

    @Test("collect all: every result in input order, failures in place, and a failure does not stop the rest")
    func collectAll() async throws {
        let (client, mock) = Fixtures.client()
        for index in 0..<6 {
            mock.stub(.get, "/items/\(index)", with: index.isMultiple(of: 3) ? .status(404) : .text("item \(index)"))
        }
        let results = await client.sendAllResults((0..<6).map(JobFixtures.item), maxConcurrent: 2)
        #expect(results.count == 6)
        for (index, result) in results.enumerated() {
            switch result {
            case .success(let value):
                #expect(!index.isMultiple(of: 3) && value == "item \(index)")
            case .failure(let error):
                #expect(index.isMultiple(of: 3) && (error as? CourierError)?.response?.status.code == 404)
            }
        }
        #expect(mock.recordedRequests.count == 6)
    }

    @Test("cancelling a group by tag cancels its requests in flight and starts no more", arguments: ["tag", "task"])
    func cancelGroup(how: String) async throws {
        let gate = JobFixtures.Gate()
        let (client, mock) = JobFixtures.gatedClient(gate)
        let group = Task {
            await client.sendAllResults((0..<10).map(JobFixtures.item), maxConcurrent: 3, tags: ["batch"])
        }
        var arrivals = gate.arrivals.makeAsyncIterator()
        _ = await JobFixtures.waitFor(3, on: &arrivals)
        gate.release("0")
        _ = await JobFixtures.waitFor(1, on: &arrivals)  // item 3 took item 0's slot
        if how == "tag" {
            #expect(client.cancelAll(tagged: "batch") == 1)
        } else {
            group.cancel()
        }
        let results = await group.value
        #expect((try? results[0].get()) == "item 0")
        for result in results.dropFirst() {
            guard case .failure(let error) = result else {
                Issue.record("expected a cancelled result, got \(result)")
                continue
            }
            #expect(error is CancellationError)
        }
        #expect(mock.recordedRequests.count == 4)
        #expect(gate.parked.isEmpty)
        #expect(client.callsInFlight == 0)
    }

    @Test("an empty group returns at once with no results")
    func empty() async throws {
        let (client, mock) = Fixtures.client()
        #expect(try await client.sendAll([Probe<String>](), maxConcurrent: 3).isEmpty)
        #expect(await client.sendAllResults([Probe<String>](), maxConcurrent: 3).isEmpty)
        #expect(mock.recordedRequests.isEmpty)
    }
}
