import AsyncHTTPClient
import CourierTestServer
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// A response read in full.
struct Fetched {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed as a JSON object.
    func json() throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(body))
        return try #require(object as? [String: Any], "not a JSON object: \(text)")
    }
}

/// Client configuration that never follows redirects. Waiting for a pooled connection is bounded by the connect
/// timeout, raised from 10 s so that 200 queued requests under the thread sanitizer (several times slower) still
/// get one: these tests measure the server, not the client's pool.
let noRedirects = HTTPClient.Configuration(
    redirectConfiguration: .disallow,
    timeout: .init(connect: .seconds(60))
)

/// Runs `body` against a fresh server and client, shutting both down afterwards.
@discardableResult
func withServer<Result>(
    configuration: HTTPClient.Configuration = noRedirects,
    _ body: (TestServer, HTTPClient) async throws -> Result
) async throws -> Result {
    let server = try await TestServer.start()
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    do {
        let result = try await body(server, client)
        try await client.shutdown()
        try await server.shutdown()
        return result
    } catch {
        try? await client.shutdown()
        try? await server.shutdown()
        throw error
    }
}

extension HTTPClient {
    /// Sends a request to `server` and reads the whole body (at most `limit` bytes).
    func fetch(
        _ server: TestServer,
        _ path: String,
        method: HTTPMethod = .GET,
        headers: [(String, String)] = [],
        body: [UInt8]? = nil,
        timeout: TimeAmount = .seconds(20),
        limit: Int = 64 << 20
    ) async throws -> Fetched {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(server.port)\(path)")
        request.method = method
        for (name, value) in headers {
            request.headers.add(name: name, value: value)
        }
        if let body {
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await execute(request, timeout: timeout)
        let buffer = try await response.body.collect(upTo: limit)
        return Fetched(
            status: Int(response.status.code), headers: response.headers, body: Array(buffer.readableBytesView))
    }
}

extension Dictionary where Key == String, Value == Any {
    /// The nested object at `key`.
    func object(_ key: String) -> [String: Any] {
        self[key] as? [String: Any] ?? [:]
    }

    /// The string at `key`.
    func string(_ key: String) -> String? {
        self[key] as? String
    }
}
