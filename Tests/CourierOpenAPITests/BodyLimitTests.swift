import Courier
import CourierCore
import CourierTestServer
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

@testable import CourierOpenAPI

/// What a generated client reads whole stays within the client's `maxResponseBodySize` (reliability row 19), and
/// what it sends in one piece carries its length.
@Suite("CourierTransport: body limits and lengths", .timeLimit(.minutes(1)))
struct BodyLimitTests {
    /// A JSON body of `size` bytes: `{"a":"aaa…"}`.
    static func json(size: Int) -> [UInt8] {
        Array(#"{"a":""#.utf8) + [UInt8](repeating: 0x61, count: size - 8) + Array(#""}"#.utf8)
    }

    @Test(
        "a JSON response longer than maxResponseBodySize fails with bodyTooLarge, not out of memory",
        arguments: TransportKind.all)
    func jsonOverLimit(transport: TransportKind) async throws {
        try await withTestServer { server in
            server.register("GET", "/get") { _ in
                TestServerResponse(headers: [("Content-Type", "application/json")], body: Self.json(size: 256 * 1024))
            }
            let courier = makeCourier(transport, server.baseURL) { $0.maxResponseBodySize = 64 * 1024 }
            do {
                _ = try await generatedClient(courier).getEcho(query: .init(name: "x")).ok.body.json
                Issue.record("a 256 KiB JSON body was read whole past a 64 KiB limit")
            } catch {
                let underlying = (error as? ClientError)?.underlyingError as? CourierError
                #expect(underlying?.code == .bodyTooLarge, "\(error)")
            }
        }
    }

    @Test(
        "a JSON operation's response without a Content-Type is limited too (the runtime decodes it as JSON)",
        arguments: TransportKind.all)
    func untypedJSONOverLimit(transport: TransportKind) async throws {
        try await withTestServer { server in
            server.register("GET", "/get") { _ in TestServerResponse(headers: [], body: Self.json(size: 256 * 1024)) }
            let courier = makeCourier(transport, server.baseURL) { $0.maxResponseBodySize = 64 * 1024 }
            do {
                _ = try await generatedClient(courier).getEcho(query: .init(name: "x")).ok.body.json
                Issue.record("a 256 KiB JSON body without a Content-Type was read whole past a 64 KiB limit")
            } catch {
                let underlying = (error as? ClientError)?.underlyingError as? CourierError
                #expect(underlying?.code == .bodyTooLarge, "\(error)")
            }
        }
    }

    @Test("a streamed JSON body of unknown length fails once it passes the limit; other types stream unlimited")
    func streamedJSONOverLimit() async throws {
        struct Chunks: AsyncSequence, Sendable {
            struct AsyncIterator: AsyncIteratorProtocol {
                var left = 64
                mutating func next() async -> ArraySlice<UInt8>? {
                    guard left > 0 else { return nil }
                    left -= 1
                    return ArraySlice(repeating: 0x20, count: 1024)
                }
            }
            func makeAsyncIterator() -> AsyncIterator { AsyncIterator() }
        }
        for (type, fails) in [
            ("application/json; charset=utf-8", true), ("application/problem+json", true), ("text/xml", true),
            ("application/octet-stream", false), ("text/event-stream", false), (nil, false),
        ] {
            var head = HTTPResponse(status: .ok)
            head.headerFields[.contentType] = type
            let live = LiveResponse(
                head: head, body: MessageBody(Chunks(), length: .unknown, iterationBehavior: .single))
            let body = try await CourierTransport.body(of: live, method: .get, decodedLimit: 16 * 1024)
            do {
                let read = try await Data(collecting: try #require(body), upTo: .max)
                #expect(!fails, "\(type ?? "no type"): read \(read.count) bytes past a 16 KiB limit")
            } catch {
                #expect(fails, "\(type ?? "no type"): \(error)")
                #expect((error as? CourierError)?.code == .bodyTooLarge, "\(error)")
            }
        }
    }

    @Test(
        "a generated JSON POST goes with its Content-Length, not chunked, on every transport",
        arguments: TransportKind.all)
    func jsonPostHasLength(transport: TransportKind) async throws {
        try await withTestServer { server in
            let seen = SeenHeaders()
            server.register("POST", "/anything") { request in
                seen.record(request.header("Content-Length"), request.header("Transfer-Encoding"))
                return .json(#"{"url":"/anything","headers":{}}"#)
            }
            let api = try generatedClient(makeCourier(transport, server.baseURL))
            _ = try await api.postAnything(body: .json(.init(name: "Ada"))).ok.body.json
            let (length, encoding) = seen.value
            #expect((length.flatMap(Int.init) ?? 0) > 0, "Content-Length: \(length ?? "none")")
            #expect(encoding == nil, "Transfer-Encoding: \(encoding ?? "")")
        }
    }

    final class SeenHeaders: Sendable {
        private let box = LockedBox<(String?, String?)>((nil, nil))
        func record(_ length: String?, _ encoding: String?) { box.withLock { $0 = (length, encoding) } }
        var value: (String?, String?) { box.withLock { $0 } }
    }
}
