import Courier
import CourierAsyncHTTPClient
import CourierTestServer
import CourierURLSession
import Foundation
import HTTPTypes
import Testing

/// A transport under test, by name (so test output says which one failed).
struct TransportKind: Sendable, CustomTestStringConvertible, Hashable {
    let name: String
    let make: @Sendable () -> any Transport
    /// A transport with these connect and idle timeouts.
    let makeWithTimeouts: @Sendable (_ connect: Duration, _ idle: Duration?) -> any Transport

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name }
    func hash(into hasher: inout Hasher) { hasher.combine(name) }
    var testDescription: String { name }

    static let asyncHTTPClient = TransportKind(
        name: "AsyncHTTPClient",
        make: { AsyncHTTPClientTransport() },
        makeWithTimeouts: { connect, idle in
            AsyncHTTPClientTransport(configuration: .init(connectTimeout: connect, idleTimeout: idle))
        }
    )
    static let urlSession = TransportKind(
        name: "URLSession",
        make: { URLSessionTransport() },
        makeWithTimeouts: { connect, idle in URLSessionTransport(connectTimeout: connect, idleTimeout: idle) }
    )

    /// Every transport the conformance suite runs on.
    static let all: [TransportKind] = [.asyncHTTPClient, .urlSession]

    /// Why this transport cannot do `capability` on this platform, or `nil` when it can.
    ///
    /// A declared gap is not skipped: ``withCapability(_:on:_:)`` asserts that the transport refuses with
    /// ``CourierError/Code/unsupported`` and prints the result.
    func unsupportedReason(_ capability: Capability) -> String? {
        if self == .urlSession, capability == .proxy {
            #if canImport(FoundationNetworking)
                return "FoundationNetworking on Linux has no proxy setting (libcurl follows only the environment)"
            #else
                return "URLSessionTransport does not map a proxy onto the session on Apple platforms yet"
            #endif
        }
        if self == .urlSession, capability == .getWithBody {
            return "URLSession refuses to send a GET with a body (FoundationNetworking; Apple's since iOS 13)"
        }
        #if canImport(FoundationNetworking)
            if self == .urlSession, let reason = Capability.foundationNetworkingTLSGaps[capability] {
                return reason
            }
        #else
            if self == .urlSession, Capability.foundationNetworkingTLSGaps[capability] != nil {
                return "URLSessionTransport does not map \(capability) on Apple platforms yet"
            }
        #endif
        return nil
    }
}

/// A behaviour of the conformance suite that a transport may declare it cannot do.
struct Capability: Hashable, Sendable, CustomStringConvertible {
    let name: String
    var description: String { name }

    /// A `GET` request with a body (RFC 9110 §9.3.1: allowed, with no defined meaning).
    static let getWithBody = Capability(name: "GET with a body")

    /// Trust roots other than the system's (``TLSOptions/trust``).
    static let customTrust = Capability(name: "custom trust roots")
    /// Public-key pins (``TLSOptions/pins``).
    static let pinning = Capability(name: "public-key pinning")
    /// A client certificate for mutual TLS (``TLSOptions/clientIdentity``).
    static let clientCertificate = Capability(name: "a client certificate")
    /// A minimum TLS version other than 1.2 (``TLSOptions/minimumVersion``).
    static let minimumTLSVersion = Capability(name: "a minimum TLS version")
    /// Choosing the HTTP versions offered by ALPN (``TLSOptions/httpVersions``).
    static let httpVersionChoice = Capability(name: "a choice of HTTP versions")
    /// A proxy chosen by Courier (``ProxyOptions/http(host:port:credentials:bypass:)``, or an environment other
    /// than the process's).
    static let proxy = Capability(name: "a proxy")
    /// Skipping certificate checks for loopback hosts (``TLSOptions/allowsInsecureLoopback``).
    static let insecureLoopback = Capability(name: "insecure loopback TLS")

    /// The TLS settings URLSession on Linux cannot take, and why.
    static let foundationNetworkingTLSGaps: [Capability: String] = [
        .customTrust: "FoundationNetworking (libcurl) on Linux takes no trust roots but its fixed CA bundle",
        .pinning: "FoundationNetworking on Linux delivers no server-trust challenge, so no chain to check pins on",
        .clientCertificate: "FoundationNetworking on Linux delivers no client-certificate challenge",
        .minimumTLSVersion: "FoundationNetworking on Linux exposes no TLS version setting",
        .httpVersionChoice: "FoundationNetworking on Linux exposes no ALPN setting",
        .insecureLoopback: "FoundationNetworking on Linux delivers no server-trust challenge to relax",
    ]
}

/// Runs `body`, which exercises `capability` on `transport`.
///
/// Where the transport declares the capability unsupported, `body` must fail with
/// ``CourierError/Code/unsupported``: a success or any other error fails the test, and the expected refusal is
/// printed as `conformance: <transport> · <capability>: unsupported (<reason>)`.
func withCapability(
    _ capability: Capability,
    on transport: TransportKind,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Void
) async throws {
    guard let reason = transport.unsupportedReason(capability) else {
        try await body()
        return
    }
    do {
        try await body()
        Issue.record(
            "\(transport.name) declares \(capability) unsupported (\(reason)), but it worked",
            sourceLocation: sourceLocation
        )
    } catch let error as CourierError where error.code == .unsupported {
        print("conformance: \(transport.name) · \(capability): unsupported (\(reason)): \(error.message ?? "")")
    }
}

/// A server the conformance suite runs against.
struct ServerKind: Sendable, CustomTestStringConvertible, Hashable {
    let name: String
    var testDescription: String { name }

    /// Courier's embedded SwiftNIO server, started per test on an ephemeral port.
    static let embedded = ServerKind(name: "embedded")
    /// The real httpbin started by `scripts/test`.
    static let httpbin = ServerKind(name: "httpbin")

    /// The embedded server and httpbin. Without httpbin (`COURIER_HTTPBIN_URL`), its cases are reported as skipped,
    /// with the reason (see ``skipCase(_:sourceLocation:)``).
    static let all: [ServerKind] = [.embedded, .httpbin]

    /// Runs `body` with the base URL of a running server of this kind, stopping it afterwards.
    func withBaseURL<T>(_ body: (URL) async throws -> T) async throws -> T {
        if self == .httpbin {
            guard let url = HTTPBin.url else {
                try skipCase("no httpbin: COURIER_HTTPBIN_URL is not set (scripts/test starts one)")
            }
            return try await body(url)
        }
        let server = try await TestServer.start()
        do {
            let result = try await body(server.baseURL)
            try await server.shutdown()
            return result
        } catch {
            try? await server.shutdown()
            throw error
        }
    }
}

/// Skips the current test case because a lab it needs is not running, visibly: Swift Testing reports the case as
/// skipped (cancelled) with `reason`. Under `scripts/test`, which starts every lab and sets
/// `COURIER_REQUIRE_LABS=1`, a missing lab fails the case instead.
func skipCase(_ reason: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Never {
    if ProcessInfo.processInfo.environment["COURIER_REQUIRE_LABS"] == "1" {
        Issue.record("\(reason), but scripts/test should have started it", sourceLocation: sourceLocation)
        throw LabMissing(reason: reason)
    }
    let test = Test.current.map { $0.displayName ?? $0.name } ?? "a test"
    print("conformance: skipped a case of \"\(test)\": \(reason)")
    try Test.cancel(Comment(rawValue: reason), sourceLocation: sourceLocation)
}

/// A lab that `scripts/test` should have started is missing.
struct LabMissing: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}

/// Runs `body` with a fresh embedded server, stopping it afterwards whatever happens.
func withTestServer<T>(_ body: (TestServer) async throws -> T) async throws -> T {
    let server = try await TestServer.start()
    do {
        let result = try await body(server)
        try await server.shutdown()
        return result
    } catch {
        try? await server.shutdown()
        throw error
    }
}

/// Makes a client for a transport and a base URL.
func makeClient(
    _ transport: TransportKind,
    _ baseURL: URL,
    configure: (inout Client.Configuration) -> Void = { _ in }
) -> Client {
    var configuration = Client.Configuration()
    configure(&configuration)
    return Client(server: Server(baseURL: baseURL), transport: transport.make(), configuration: configuration)
}

/// The same server under another origin (`localhost` instead of `127.0.0.1`), for cross-origin redirects.
func otherOrigin(of url: URL) throws -> URL {
    var components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
    components.host = "localhost"
    return try #require(components.url)
}

/// The real httpbin the test script started, if any.
enum HTTPBin {
    static let url: URL? = ProcessInfo.processInfo.environment["COURIER_HTTPBIN_URL"].flatMap(URL.init(string:))
    static var isAvailable: Bool { url != nil }

}

/// httpbin's echo of a request (`/anything`, `/get`, `/post`, …).
struct Echo: Decodable, Sendable {
    let args: [String: String]
    let data: String?
    let form: [String: String]?
    let json: JSONValue?
    let headers: [String: String]
    let method: String?
    let url: String
}

/// Any JSON value, for asserting on echoed JSON.
enum JSONValue: Decodable, Sendable, Equatable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }
}

/// A request against httpbin with everything a test varies.
struct HTTPBinCall<Value: Decodable & Sendable>: Request {
    typealias Response = Value
    var method: HTTPRequest.Method = .get
    var path: String
    var query: Parameters? = nil
    var headers: RequestHeaders = [:]
    var body: RequestBody? = nil
    var timeout: Duration? = nil
    var maxResponseBodySize: Int? = nil
}

/// Expects a `CourierError` and returns it.
func expectCourierError<T>(
    _ body: () async throws -> T,
    sourceLocation: SourceLocation = #_sourceLocation
) async -> CourierError? {
    do {
        _ = try await body()
        Issue.record("expected a CourierError, but the call succeeded", sourceLocation: sourceLocation)
    } catch let error as CourierError {
        return error
    } catch {
        Issue.record("expected a CourierError, got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
