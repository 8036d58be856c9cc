import Courier
import CourierOpenAPI
import CourierTestServer
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

/// Bodies streamed both ways under a generated client, on both transports: a download larger than the client's
/// buffering limit, uploads of known and unknown length, and the OpenAPI runtime's Server-Sent Events and JSON Lines
/// helpers over a response whose rest the server holds back until the client has read the first item.
@Suite("CourierTransport: streamed bodies", .timeLimit(.minutes(2)))
struct CourierTransportStreamingTests {
    @Test("a download streams: 8 MiB through a client that buffers at most 64 KiB", arguments: TransportKind.all)
    func download(transport: TransportKind) async throws {
        try await withTestServer { server in
            let courier = makeCourier(transport, server.baseURL) { $0.maxResponseBodySize = 64 * 1024 }
            let count = 8 * 1024 * 1024
            let body = try await generatedClient(courier).downloadBytes(
                path: .init(count: count), query: .init(seed: 7)
            )
            .ok.body.binary
            #expect(body.iterationBehavior == .single)
            let (bytes, chunks) = try await drain(body)
            #expect(bytes == count)
            #expect(chunks > 1)
        }
    }

    @Test(
        "an upload streams, with its length (Content-Length) or without (chunked)",
        arguments: TransportKind.all, [true, false])
    func upload(transport: TransportKind, knownLength: Bool) async throws {
        try await withTestServer { server in
            let api = try generatedClient(makeCourier(transport, server.baseURL))
            let chunk = ArraySlice([UInt8](repeating: 0x2A, count: 64 * 1024))
            let chunks = 48
            let (stream, continuation) = AsyncStream<ArraySlice<UInt8>>.makeStream(bufferingPolicy: .bufferingOldest(4))
            let producer = Task {
                var sent = 0
                while sent < chunks {
                    if case .enqueued = continuation.yield(chunk) { sent += 1 } else { await Task.yield() }
                }
                continuation.finish()
            }
            let size = chunk.count * chunks
            let body = HTTPBody(stream, length: knownLength ? .known(Int64(size)) : .unknown)

            let result = try await api.upload(body: .binary(body)).ok.body.json

            #expect(result.bytes == Int64(size))
            await producer.value
        }
    }

    @Test(
        "a one-shot upload is never re-sent: the retry policy lets its 503 through to the generated code",
        arguments: TransportKind.all)
    func oneShotUploadIsNotRetried(transport: TransportKind) async throws {
        try await withTestServer { server in
            let hits = Counter()
            server.register("PUT", "/upload") { _ in
                hits.increment()
                return TestServerResponse(status: 503)
            }
            let api = try generatedClient(makeCourier(transport, server.baseURL))
            let once = AsyncStream<ArraySlice<UInt8>> { continuation in
                continuation.yield(ArraySlice("once".utf8))
                continuation.finish()
            }
            let body = HTTPBody(once, length: .unknown)
            let output = try await api.upload(body: .binary(body))
            guard case .undocumented(let status, _) = output else {
                Issue.record("expected the 503, got \(output)")
                return
            }
            #expect(status == 503)
            #expect(hits.count == 1, "a PUT is idempotent, but its one-shot body cannot be sent again")
        }
    }

    @Test(
        "Server-Sent Events decode with the runtime's helper as the server flushes them", arguments: TransportKind.all)
    func serverSentEvents(transport: TransportKind) async throws {
        try await withTestServer { server in
            let api = try generatedClient(makeCourier(transport, server.baseURL))
            let gate = UUID().uuidString
            let body = try await api.getEvents(query: .init(count: 3, hold: gate)).ok.body.textEventStream
            var events = body.asDecodedServerSentEventsWithJSONData(of: Components.Schemas.Tick.self)
                .makeAsyncIterator()

            // The server sends nothing more until released: a transport that buffered the body would wait here.
            let first = try await events.next()
            #expect(first?.id == "0" && first?.event == "tick" && first?.data?.n == 0)
            _ = try await api.releaseStream(path: .init(name: gate))
            var rest: [Int] = []
            while let event = try await events.next() { rest.append(event.data?.n ?? -1) }
            #expect(rest == [1, 2])
        }
    }

    @Test("JSON Lines decode with the runtime's helper as the server flushes them", arguments: TransportKind.all)
    func jsonLines(transport: TransportKind) async throws {
        try await withTestServer { server in
            let api = try generatedClient(makeCourier(transport, server.baseURL))
            let gate = UUID().uuidString
            let body = try await api.getJSONLines(query: .init(count: 3, hold: gate)).ok.body.applicationXNdjson
            var lines = body.asDecodedJSONLines(of: Components.Schemas.Tick.self).makeAsyncIterator()

            #expect(try await lines.next()?.n == 0)
            _ = try await api.releaseStream(path: .init(name: gate))
            var rest: [Int] = []
            while let line = try await lines.next() { rest.append(line.n) }
            #expect(rest == [1, 2])
        }
    }
}
