import Courier
import CourierTestServer
import Foundation
import HTTPTypes
import Testing

/// The TLS servers the HTTPS conformance tests run against: the embedded server over HTTP/1.1 or HTTP/2, and the
/// nginx lab that `scripts/nginx-tls` starts.
struct TLSTarget: Sendable, CustomTestStringConvertible, Hashable {
    let name: String
    /// The ALPN protocols of the embedded server; `nil` for nginx.
    let protocols: [TestServerTLS.ApplicationProtocol]?
    var testDescription: String { name }

    static let embeddedHTTP1 = TLSTarget(name: "embedded https h1", protocols: [.http1])
    static let embeddedHTTP2 = TLSTarget(name: "embedded https h2", protocols: [.http2, .http1])
    static let nginx = TLSTarget(name: "nginx", protocols: nil)

    /// Every target; nginx is reported as skipped, with the reason, when the lab is not running.
    static let all: [TLSTarget] = [.embeddedHTTP1, .embeddedHTTP2, .nginx]

    /// Runs `body` with the target's base URL, the options that trust its CA, and (for the embedded server) the
    /// server; returns `false`, after printing why, when the target is nginx and the lab is not running.
    func run(
        on transport: TransportKind,
        _ caseName: String,
        _ body: (URL, TLSOptions, TestServer?) async throws -> Void
    ) async throws -> Bool {
        guard let protocols else {
            guard let url = NginxLab.url, let trust = try NginxLab.trust() else {
                try skipCase("\(caseName) (nginx): \(NginxLab.missingReason)")
            }
            try await body(url, TLSOptions(trust: trust), nil)
            return true
        }
        let authority = try TLSLab.authority.get()
        try await withTLSServer(TestServerTLS(authority: authority, applicationProtocols: protocols)) { server in
            try await body(server.baseURL, try TLSLab.trusting(authority), server)
        }
        return true
    }
}

/// The nginx TLS lab started by `scripts/nginx-tls` (through `scripts/test`), read from its environment variables.
enum NginxLab {
    private static let environment = ProcessInfo.processInfo.environment

    /// `COURIER_NGINX_URL`: the good block (HTTP/2 and HTTP/1.1), in front of httpbin.
    static let url = environment["COURIER_NGINX_URL"].flatMap(URL.init(string:))
    /// `COURIER_NGINX_PIN`: the leaf's SPKI pin.
    static let leafPin = environment["COURIER_NGINX_PIN"]
    /// `COURIER_NGINX_ROOT_PIN`: the lab root's SPKI pin.
    static let rootPin = environment["COURIER_NGINX_ROOT_PIN"]
    static let missingReason = "COURIER_NGINX_URL is not set: run scripts/test, or source scripts/nginx-tls"

    /// The lab's root, from `COURIER_NGINX_CA`, trusted alone; `nil` when the lab is not running.
    static func trust() throws -> TLSOptions.Trust? {
        guard let path = environment["COURIER_NGINX_CA"] else { return nil }
        return .only(try TLSOptions.Certificate.file(at: URL(fileURLWithPath: path)))
    }

    /// The URL of a bad block, from `COURIER_NGINX_<variant>_URL`.
    static func url(_ variant: String) -> URL? {
        environment["COURIER_NGINX_\(variant)_URL"].flatMap(URL.init(string:))
    }
}

/// The certificate authorities shared by the HTTPS conformance tests, and helpers around them.
enum TLSLab {
    /// The lab's authority: the embedded server presents its certificates.
    static let authority = Result { try TestCertificateAuthority(name: "Courier Conformance") }
    /// A second authority, trusted in some tests but never pinned: a MITM proxy whose CA the device trusts.
    static let interceptor = Result { try TestCertificateAuthority(name: "Courier Interceptor") }

    /// Options that trust only `authority`'s root.
    static func trusting(_ authority: TestCertificateAuthority) throws -> TLSOptions {
        TLSOptions(trust: .only(try TLSOptions.Certificate.pem(authority.root.certificatePEM)))
    }

    /// A well-formed pin (32 bytes, base64) that no key here has: the label's bytes, padded.
    static func unrelatedPin(_ label: String) -> String {
        let bytes = Array(label.utf8.prefix(32))
        return Data(bytes + [UInt8](repeating: 0x5A, count: 32 - bytes.count)).base64EncodedString()
    }

    /// The end-user sentence for every TLS failure.
    static let secureConnectionSentence = "A secure connection to the server couldn't be made."
}

/// Runs `body` with a fresh embedded TLS server, stopping it afterwards whatever happens.
func withTLSServer<T>(_ tls: TestServerTLS, _ body: (TestServer) async throws -> T) async throws -> T {
    let server = try await TestServer.start(tls: tls)
    do {
        let result = try await body(server)
        try await server.shutdown()
        return result
    } catch {
        try? await server.shutdown()
        throw error
    }
}

/// A client for `baseURL` with `tls` as the client's options (``Client/Configuration/tls``).
func tlsClient(_ transport: any Transport, _ baseURL: URL, _ tls: TLSOptions) -> Client {
    var configuration = Client.Configuration()
    configuration.tls = tls
    return Client(server: Server(baseURL: baseURL), transport: transport, configuration: configuration)
}

/// A request with everything the HTTPS tests vary.
struct HTTPSCall<Value: Decodable & Sendable>: Request {
    typealias Response = Value
    var method: HTTPRequest.Method = .get
    var path: String
    var query: Parameters? = nil
    var body: RequestBody? = nil
    var server: Server? = nil
}

/// A request whose response is the raw body.
struct HTTPSBytes: Request {
    typealias Response = Data
    var path: String
    var query: Parameters? = nil
}

/// Expects `body` to fail with a `CourierError` and returns it, like ``expectCourierError(_:sourceLocation:)``,
/// except that a refusal as ``CourierError/Code/unsupported`` is rethrown, for ``tlsCase(_:on:needs:sourceLocation:_:)``
/// to check that the transport declared it.
func expectTLSFailure<T>(
    _ body: () async throws -> T,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws -> CourierError? {
    do {
        _ = try await body()
        Issue.record("expected a CourierError, but the call succeeded", sourceLocation: sourceLocation)
    } catch let error as CourierError where error.code == .unsupported {
        throw error
    } catch let error as CourierError {
        return error
    } catch {
        Issue.record("expected a CourierError, got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// Runs one HTTPS case on `transport`, timed, and prints `conformance: <transport> · <case>: <outcome> in <time>`.
///
/// `body` returns the outcome of its calls (`ok`, or the code they failed with); its assertions are reported by
/// the test as usual, so a line can say `ok` for a call whose result an expectation then found wrong. Where the transport declares one of `needs`
/// unsupported, `body` must fail with ``CourierError/Code/unsupported`` (as ``withCapability(_:on:_:)`` asserts,
/// but printed under the case's name): a success or another error fails the test.
func tlsCase(
    _ name: String,
    on transport: TransportKind,
    needs capabilities: [Capability],
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> String
) async throws {
    let start = ContinuousClock.now
    let unsupported = capabilities.lazy.compactMap { capability in
        transport.unsupportedReason(capability).map { (capability, $0) }
    }.first
    guard let (capability, reason) = unsupported else {
        let outcome = try await body()
        print("conformance: \(transport.name) · \(name): \(outcome) in \(ContinuousClock.now - start)")
        return
    }
    do {
        let outcome = try await body()
        Issue.record(
            "\(transport.name) declares \(capability) unsupported (\(reason)), but \(name) gave \(outcome)",
            sourceLocation: sourceLocation)
    } catch let error as CourierError where error.code == .unsupported {
        let elapsed = ContinuousClock.now - start
        print("conformance: \(transport.name) · \(name): unsupported (\(capability): \(reason)) in \(elapsed)")
    }
}

/// The highest attempt number in an error's trace (1 when the call was not retried).
func attempts(_ error: CourierError?) -> Int {
    error?.trace.steps.map(\.attempt).max() ?? 0
}
