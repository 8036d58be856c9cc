import AsyncHTTPClient
import CourierTestServer
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import Testing

@Suite("streaming routes", .timeLimit(.minutes(2)))
struct StreamingRoutesTests {
    @Test func streamBytesArrivesComplete() async throws {
        try await withServer { server, client in
            let total = 10 * 1024 * 1024
            let request = HTTPClientRequest(url: "\(server.baseURL)/stream-bytes/\(total)?seed=3&chunk_size=16384")
            let response = try await client.execute(request, timeout: .seconds(60))
            #expect(response.status == .ok)
            #expect(response.headers["Transfer-Encoding"] == ["chunked"])
            var count = 0
            for try await buffer in response.body {
                count += buffer.readableBytes
            }
            #expect(count == total)
        }
    }

    @Test func streamBytesIsDeterministicWithSeed() async throws {
        try await withServer { server, client in
            let first = try await client.fetch(server, "/stream-bytes/200000?seed=5&chunk_size=1000")
            let second = try await client.fetch(server, "/stream-bytes/200000?seed=5")
            #expect(first.body.count == 200_000)
            #expect(first.body == second.body)
        }
    }

    @Test func uploadCountsTenMebibytes() async throws {
        try await withServer { server, client in
            let size = 10 * 1024 * 1024
            var request = HTTPClientRequest(url: "\(server.baseURL)/upload")
            request.method = .POST
            request.body = .bytes(ByteBuffer(repeating: 0x61, count: size))
            let response = try await client.execute(request, timeout: .seconds(60))
            let body = try await response.body.collect(upTo: 1024)
            #expect(String(buffer: body) == "{\"bytes\": \(size)}\n")
        }
    }

    @Test func uploadCountsAChunkedStream() async throws {
        try await withServer { server, client in
            let chunks = (0..<64).map { _ in ByteBuffer(repeating: 0x62, count: 100_000) }
            var request = HTTPClientRequest(url: "\(server.baseURL)/upload")
            request.method = .PUT
            request.body = .stream(chunks.async, length: .unknown)
            let response = try await client.execute(request, timeout: .seconds(60))
            let body = try await response.body.collect(upTo: 1024)
            #expect(String(buffer: body) == "{\"bytes\": 6400000}\n")
        }
    }

    @Test func gzipBombIsSmallOnTheWireAndInflatesToZeros() async throws {
        try await withServer { server, client in
            let raw = try await client.fetch(server, "/fault/gzip-bomb?size=209715200")
            #expect(raw.headers["Content-Encoding"] == ["gzip"])
            #expect((150_000...260_000).contains(raw.body.count), "compressed size \(raw.body.count)")
        }
        let generous = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            decompression: .enabled(limit: .ratio(2000))
        )
        try await withServer(configuration: generous) { server, client in
            let inflated = try await client.fetch(server, "/fault/gzip-bomb?size=3000000")
            #expect(inflated.body.count == 3_000_000)
            #expect(inflated.body.allSatisfy { $0 == 0 })
        }
        try await withServer(configuration: ContentRoutesTests.decompressing) { server, client in
            await #expect(throws: (any Error).self) {
                try await client.fetch(server, "/fault/gzip-bomb?size=209715200", limit: 300 << 20)
            }
        }
    }

    @Test func stackedEncodingsSpanSeveralLines() async throws {
        try await withServer { server, client in
            let response = try await client.fetch(server, "/fault/stacked-encodings")
            let lines = response.headers["Content-Encoding"]
            #expect(lines.count == 3)
            let codings = lines.flatMap { $0.split(separator: ",") }
            #expect(codings.count == 6)
            #expect(response.body.starts(with: [0x1F, 0x8B]))
        }
    }
}

extension Array where Element == ByteBuffer {
    /// The elements as an `AsyncSequence`.
    fileprivate var async: AsyncStream<Element> {
        AsyncStream { continuation in
            for element in self {
                continuation.yield(element)
            }
            continuation.finish()
        }
    }
}
