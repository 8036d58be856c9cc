import AsyncHTTPClient
import CourierTestServer
import Foundation
import NIOCore
import NIOHTTP1
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sends `first` on a new TCP connection to `port`, reads until its response head has arrived, then sends `second`
/// on the same connection, and returns every byte the server sent until it closed the connection (or until nothing
/// arrived for `idle` seconds: a bound on a broken server, long enough for a loaded machine). Bytes the server wrongly
/// sends after the first head arrive before the second response.
private func rawExchange(port: Int, _ first: String, then second: String, idle: Int = 30) async -> String {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
            let descriptor = socket(AF_INET, streamSocket, 0)
            guard descriptor >= 0 else { return continuation.resume(returning: "") }
            defer { close(descriptor) }
            var timeout = timeval(tv_sec: idle, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else { return continuation.resume(returning: "") }
            func write(_ text: String) {
                let bytes = Array(text.utf8)
                _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
            }
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            var sentSecond = false
            write(first)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }  // closed, or nothing for `idle` seconds
                received += buffer[0..<count]
                if !sentSecond, String(decoding: received, as: UTF8.self).contains("\r\n\r\n") {
                    sentSecond = true
                    write(second)
                }
            }
            continuation.resume(returning: String(decoding: received, as: UTF8.self))
        }
    }
}

/// The bytes between the end of the first response's head and the next status line: the first response's body.
private func firstBody(of text: String) -> Substring? {
    guard let headEnd = text.range(of: "\r\n\r\n") else { return nil }
    let rest = text[headEnd.upperBound...]
    guard let next = rest.range(of: "HTTP/1.1 ") else { return rest }
    return rest[..<next.lowerBound]
}

// Serialized: the 64 MiB uploads of one test would otherwise share the machine with the raw exchanges of the others.
@Suite("Test server robustness", .serialized, .timeLimit(.minutes(2)))
struct ServerRobustnessTests {
    @Test(
        "HEAD to a route that streams its body, and a 304, send no body: the next response on the connection is intact",
        arguments: [
            "HEAD /stream-bytes/100", "HEAD /drip?numbytes=3&duration=0", "HEAD /trailers/100", "GET /sse?status=304",
        ])
    func noBodyWhereNoneBelongs(first: String) async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.shutdown() } }
        let text = await rawExchange(
            port: server.port, "\(first) HTTP/1.1\r\nHost: t\r\n\r\n",
            then: "GET /get HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        #expect(firstBody(of: text) == "", "\(text.prefix(400))")
        #expect(text.components(separatedBy: "HTTP/1.1 200").count == (first.hasPrefix("GET /sse") ? 2 : 3))
        #expect(text.contains("\"url\""), "the GET /get after it was answered: \(text.suffix(200))")
        try await server.shutdown()
    }

    @Test(
        "numbers that are not finite, and interim statuses, get an answer, not a crash of the test process",
        arguments: [
            ("/status/418:0", 418), ("/status/418:nan", 418), ("/status/418:inf", 418), ("/status/418:-1", 418),
            ("/status/100", 400), ("/delay/nan", 200), ("/drip?numbytes=2&duration=nan", 200),
            ("/drip?numbytes=2&delay=nan", 200),
        ])
    func nonFiniteNumbers(path: String, status: Int) async throws {
        let answered = try await withServer { server, client in try await client.fetch(server, path).status }
        #expect(answered == status)
    }

    @Test("a held stream in batches sends its first event before it waits at the gate")
    func heldStreamInBatches() async throws {
        try await withServer { server, client in
            let gate = UUID().uuidString
            let request = HTTPClientRequest(url: "\(server.baseURL)/sse?count=3&batch=2&hold=\(gate)")
            let response = try await client.execute(request, timeout: .seconds(30))
            var body = response.body.makeAsyncIterator()
            var text = ""
            // Before: the first event was still in the batch while the stream waited, and this waited for ever.
            while !text.contains("data: {\"n\":0}"), var chunk = try await body.next() {
                text += chunk.readString(length: chunk.readableBytes) ?? ""
            }
            #expect(!text.contains("id: 1\n"))
            _ = try await client.fetch(server, "/sse-release/\(gate)")
            while var chunk = try await body.next() { text += chunk.readString(length: chunk.readableBytes) ?? "" }
            #expect(text.contains("id: 1\n") && text.contains("id: 2\n"))
        }
    }

    @Test("shutdown ends a stream held at a gate nobody opens")
    func shutdownWithHeldStream() async throws {
        let server = try await TestServer.start()
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: noRedirects)
        defer { Task { try? await client.shutdown() } }
        let request = HTTPClientRequest(url: "\(server.baseURL)/sse?count=3&hold=\(UUID().uuidString)")
        let response = try await client.execute(request, timeout: .seconds(30))
        var body = response.body.makeAsyncIterator()
        #expect(try await body.next() != nil)  // the first event: the stream now waits at its gate
        let finished = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await server.shutdown()
                return true
            }
            group.addTask {
                try await Task.sleep(for: .seconds(20))
                return false
            }
            let first = try await group.next() ?? false
            group.cancelAll()
            return first
        }
        #expect(finished, "shutdown() still waiting after 20 s")
    }

    @Test("a chunked body that grows past the 64 MiB limit gets its 413, not a reset, every time")
    func tooLargeIsAnsweredNotReset() async throws {
        let chunk = ByteBuffer(repeating: 0x61, count: 1 << 20)
        try await withServer { server, client in
            for _ in 0..<3 {
                var request = HTTPClientRequest(url: "\(server.baseURL)/post")
                request.method = .POST
                // 64 chunks of 1 MiB (one shared buffer), then one byte: chunked, no length.
                let (chunks, continuation) = AsyncStream<ByteBuffer>.makeStream()
                for _ in 0..<64 { continuation.yield(chunk) }
                continuation.yield(ByteBuffer(bytes: [0x61]))
                continuation.finish()
                request.body = .stream(chunks, length: .unknown)
                let response = try await client.execute(request, timeout: .seconds(30))
                #expect(response.status.code == 413)
                #expect(String(buffer: try await response.body.collect(upTo: 1024)) == "request body too large")
            }
        }
    }

    @Test(
        "a body declared over the 64 MiB limit gets a 413 at once, without a 100 Continue first",
        arguments: ["", "Expect: 100-continue\r\n"])
    func tooLargeIsRefusedBeforeTheBody(expect: String) async throws {
        let server = try await TestServer.start()
        defer { Task { try? await server.shutdown() } }
        let declared = TestServerRequest.maximumBodySize + 1
        // Only the head is sent: a server that waits for the body (or sends 100 Continue) answers nothing else.
        let text = await rawExchange(
            port: server.port,
            "POST /post HTTP/1.1\r\nHost: t\r\nContent-Length: \(declared)\r\n\(expect)\r\n", then: "")
        #expect(text.hasPrefix("HTTP/1.1 413 "), "\(text.prefix(200))")
        #expect(text.contains("request body too large"))
        try await server.shutdown()
    }

    /// Whether this machine has IPv6 loopback (a container may have IPv6 disabled): binding a socket to ::1.
    static let hasIPv6Loopback: Bool = {
        let descriptor = socket(AF_INET6, streamSocket, 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
            }
        }
        return bound == 0
    }()

    @Test(
        "a server on ::1 gives a base URL on ::1",
        .enabled(if: hasIPv6Loopback, "this machine has no IPv6 loopback (::1 cannot be bound)"))
    func ipv6BaseURL() async throws {
        let server = try await TestServer.start(host: "::1")
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: noRedirects)
        #expect(server.baseURL.host == "::1" || server.baseURL.host == "[::1]", "\(server.baseURL)")
        let response = try await client.execute(
            HTTPClientRequest(url: server.baseURL.appendingPathComponent("get").absoluteString), timeout: .seconds(10))
        #expect(response.status.code == 200)
        try await client.shutdown()
        try await server.shutdown()
    }
}

/// `SOCK_STREAM` as `socket(2)` takes it: an enum in Glibc's module, an `Int32` on Darwin, Musl and Android.
private var streamSocket: Int32 {
    #if canImport(Glibc)
        Int32(SOCK_STREAM.rawValue)
    #else
        SOCK_STREAM
    #endif
}
