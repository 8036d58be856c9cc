import Courier
import Foundation
import HTTPTypes
import Testing

/// A 304, 204 or HEAD response has no body, but the transport's (empty) body is read to its end on the cache's
/// paths too, as the pipeline reads it: AsyncHTTPClient closes a connection whose response was dropped unread instead
/// of returning it to the pool, so every revalidation would cost a new connection.
@Suite("HTTPCache: bodiless responses are read to their end", .timeLimit(.minutes(1)))
struct CacheBodyDrainTests {
    typealias Page = CacheFixtures.Page

    /// An empty body that counts the readers that reached its end.
    struct DrainProbe: AsyncSequence, Sendable {
        typealias Element = ArraySlice<UInt8>
        let drained: DecisionFixtures.Shared<Int>

        struct AsyncIterator: AsyncIteratorProtocol {
            let drained: DecisionFixtures.Shared<Int>
            mutating func next() async throws -> ArraySlice<UInt8>? {
                drained.update { $0 += 1 }
                return nil
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(drained: drained) }
    }

    /// Answers with `responses` in turn (the last one again when they run out); a response whose body is `nil` gets a
    /// ``DrainProbe``.
    final class ScriptedTransport: Transport {
        let drained = DecisionFixtures.Shared(0)
        private let script: DecisionFixtures.Shared<[(HTTPResponse, Data?)]>
        let sent = DecisionFixtures.Shared(0)

        init(_ responses: [(HTTPResponse, Data?)]) { script = DecisionFixtures.Shared(responses) }

        func send(_ request: OutgoingRequest, context: TransportContext) async throws -> TransportResponse {
            let index = sent.update { count -> Int in
                count += 1
                return count - 1
            }
            let (head, data) = script.value[min(index, script.value.count - 1)]
            let body =
                data.map { MessageBody($0) }
                ?? MessageBody(DrainProbe(drained: drained), length: .unknown, iterationBehavior: .single)
            return TransportResponse(head: head, body: body)
        }
    }

    static func response(_ code: Int, _ pairs: KeyValuePairs<String, String>) -> HTTPResponse {
        HTTPResponse(status: .init(code: code), headerFields: CacheFixtures.fields(pairs))
    }

    static func client(over transport: ScriptedTransport, deduplicating: Bool, time: CacheFixtures.Time) throws
        -> (Client, HTTPCache)
    {
        let cache = try HTTPCache(storage: .memory(byteLimit: 1 << 20), now: time.closure)
        var configuration = Client.Configuration(retryPolicy: .disabled)
        configuration.cache = cache
        configuration.deduplicatesRequests = deduplicating
        return (
            Client(server: Server(baseURL: Fixtures.baseURL), transport: transport, configuration: configuration), cache
        )
    }

    @Test("a revalidation's 304 is read to its end, with and without de-duplication", arguments: [false, true])
    func notModifiedIsDrained(deduplicating: Bool) async throws {
        let transport = ScriptedTransport([
            (Self.response(200, ["Cache-Control": "max-age=10", "ETag": "\"v1\""]), Data("stored".utf8)),
            (Self.response(304, ["Cache-Control": "max-age=10", "ETag": "\"v1\""]), nil),
        ])
        let time = CacheFixtures.Time()
        let (client, _) = try Self.client(over: transport, deduplicating: deduplicating, time: time)
        _ = try await client.sendWithCacheStatus(Page())
        time.advance(by: 20)
        let revalidated = try await client.sendWithCacheStatus(Page())
        #expect(revalidated.value == "stored" && revalidated.cacheStatus?.outcome == .revalidated)
        #expect(transport.sent.value == 2)
        #expect(transport.drained.value == 1)
    }

    @Test("a stored 204 is read to its end, with and without de-duplication", arguments: [false, true])
    func noContentIsDrained(deduplicating: Bool) async throws {
        let transport = ScriptedTransport([(Self.response(204, ["Cache-Control": "max-age=60"]), nil)])
        let (client, cache) = try Self.client(over: transport, deduplicating: deduplicating, time: CacheFixtures.Time())
        #expect(try await client.sendWithCacheStatus(Page()).value == "")
        #expect(transport.drained.value == 1)
        #expect(cache.count == 1)
    }
}
