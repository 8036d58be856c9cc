import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// Shared helpers for the adapter and validation suites.
enum AdapterFixtures {
    /// `https://api.example.com`, the server of ``Fixtures/client(baseURL:configure:)``.
    static let server = Fixtures.server

    /// A context for calling an adapter directly.
    static func context(
        server: Server = server,
        knownServers: [Server]? = nil,
        authentication: AuthenticationRequirement = .optional,
        jsonEncoder: JSONEncoder = JSONEncoder(),
        queryEncoder: URLEncodedFormEncoder = URLEncodedFormEncoder(),
        formEncoder: URLEncodedFormEncoder = URLEncodedFormEncoder()
    ) -> AdapterContext {
        AdapterContext(
            server: server,
            knownServers: knownServers,
            authentication: authentication,
            jsonEncoder: jsonEncoder,
            queryEncoder: queryEncoder,
            formEncoder: formEncoder
        )
    }

    /// An outgoing request as the resolver would build it.
    static func outgoing(
        method: HTTPRequest.Method = .get,
        scheme: String = "https",
        authority: String = "api.example.com",
        path: String = "/probe",
        headers: HTTPFields = [:]
    ) -> OutgoingRequest {
        var head = HTTPRequest(method: method, scheme: scheme, authority: authority, path: path)
        head.headerFields = headers
        return OutgoingRequest(head: head)
    }

    /// A string-returning probe with the given parts.
    static func probe(
        method: HTTPRequest.Method = .get,
        path: String = "/probe",
        query: Parameters? = nil,
        headers: RequestHeaders = [:],
        body: RequestBody? = nil,
        server: Server? = nil,
        authentication: AuthenticationRequirement = .optional,
        adapters: [any RequestAdapter] = []
    ) -> Probe<String> {
        var probe = Probe(method: method, path: path)
        probe.query = query
        probe.headers = headers
        probe.body = body
        probe.server = server
        probe.authentication = authentication
        probe.extraAdapters = adapters
        return probe
    }

    /// A client on a fresh mock transport that answers every request with `200 ok`.
    static func answeringClient(
        baseURL: URL = Fixtures.baseURL,
        configure: (inout Client.Configuration) -> Void = { _ in }
    ) -> (Client, MockTransport) {
        let (client, mock) = Fixtures.client(baseURL: baseURL, configure: configure)
        for _ in 0..<8 { mock.enqueue(.text("ok")) }
        return (client, mock)
    }

    /// A one-shot streamed body of `chunks`, with the given announced length.
    static func stream(_ chunks: [String], length: MessageBody.Length) -> MessageBody {
        let stream = AsyncStream<ArraySlice<UInt8>> { continuation in
            for chunk in chunks { continuation.yield(ArraySlice(Array(chunk.utf8))) }
            continuation.finish()
        }
        return MessageBody(stream, length: length, iterationBehavior: .single)
    }

    /// A closure adapter that rewrites the request's scheme and authority (as a misbehaving adapter might).
    static func retarget(scheme: String = "https", authority: String) -> ClosureAdapter {
        .custom("retarget") { request, _ in
            var request = request
            request.head.scheme = scheme
            request.head.authority = authority
            return request
        }
    }
}

extension OutgoingRequest {
    /// The body's bytes as UTF-8 text, or `nil` without a body.
    func bodyText() async throws -> String? {
        guard let body else { return nil }
        return String(decoding: try await body.collect(upTo: .max), as: UTF8.self)
    }
}

extension HTTPFields {
    /// All values of the field named `name` (case-insensitive), in order.
    func values(named name: String) -> [String] {
        guard let fieldName = HTTPField.Name(name) else { return [] }
        return self[values: fieldName]
    }
}

/// Counts calls from concurrent code.
actor CallCounter {
    private(set) var count = 0

    func increment() { count += 1 }
}

/// An error of the test's own, to check that errors are wrapped or passed through.
struct TestFailure: Error, Equatable {
    var reason: String
}

/// Encodes `NaN`, which JSON and form encoders refuse.
struct Unencodable: Encodable, Sendable {
    var value = Double.nan
}
