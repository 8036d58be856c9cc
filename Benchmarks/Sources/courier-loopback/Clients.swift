import AsyncHTTPClient
import Courier
import CourierAsyncHTTPClient
import CourierURLSession
import Foundation
import HTTPTypes
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The clients the harness compares, in pairs: each Courier client against the raw transport it drives, and
/// swift-openapi-runtime's client (the nearest peer that installs here) against the raw AsyncHTTPClient it drives.
enum ClientKind: String, CaseIterable, Sendable, Hashable {
    /// Courier's full default pipeline on ``CourierAsyncHTTPClient/AsyncHTTPClientTransport``.
    case courierAHC = "courier-ahc"
    /// AsyncHTTPClient's `HTTPClient` with the transport's pool settings, decoding with `JSONDecoder`.
    case rawAHC = "raw-ahc"
    /// `raw-ahc` with the 60 s read (idle) timeout that Courier's transport sets by default, so
    /// `courier-ahc / raw-ahc-idle` leaves out what AsyncHTTPClient's idle timer costs (it re-arms an event-loop
    /// timer on every read).
    case rawAHCIdle = "raw-ahc-idle"
    /// `raw-ahc-idle` with each request in a child task of its own (`async let`), as Courier runs each call (so that
    /// ``Courier/Client/cancelAll(tagged:)`` cancels the call and not its caller) and as a server's handler runs in a
    /// task per request. A new task's allocator starts empty, so the frames under it come from fresh slabs on every
    /// request, where `raw-ahc`'s long-lived worker tasks reuse theirs: `courier-ahc / raw-ahc-task` leaves out what
    /// the task per call and the idle timer cost.
    case rawAHCTask = "raw-ahc-task"
    /// AsyncHTTPClient's older, delegate-based API (`execute(request:deadline:)`, which collects the body with its
    /// `ResponseAccumulator`), with `raw-ahc`'s settings: what that API costs per request, next to the async API's.
    /// Not in the timed matrix by default.
    case rawAHCDelegate = "raw-ahc-delegate"
    /// The delegate-based API with a delegate of this harness's (``IdleWatchingCollector``): the body collected, an
    /// idle timer of its own that is scheduled once per request and moved only when it fires early (where
    /// AsyncHTTPClient's read timeout cancels and schedules one on every read), and a task-cancellation handler that
    /// cancels AsyncHTTPClient's task. What a transport on that API would pay for `raw-ahc-idle`'s features, and what
    /// would let it end a request without cancelling a Swift task (so without Courier's task per call):
    /// `raw-ahc-delegate-idle / raw-ahc-idle`, which also leaves out AsyncHTTPClient's request tracing (a no-op span
    /// with no tracer bootstrapped), done on its async API only; Courier's transport turns it off, so
    /// `raw-ahc-delegate-idle` against `courier-transport` compares the two APIs alone. Not in the timed matrix by
    /// default.
    case rawAHCDelegateIdle = "raw-ahc-delegate-idle"
    /// ``CourierAsyncHTTPClient/AsyncHTTPClientTransport`` alone, without Courier's pipeline: a request built once,
    /// handed to the transport's `send` with a default context, its body collected (and decoded with `JSONDecoder`).
    /// `courier-transport / raw-ahc-idle` is what the transport's conversions cost (both have the idle timer),
    /// `courier-ahc / courier-transport` what the pipeline around it costs (adapters, validation, decisions, parse,
    /// call record, task per call).
    case courierTransport = "courier-transport"
    /// Courier's full default pipeline on ``CourierURLSession/URLSessionTransport``.
    case courierURLSession = "courier-urlsession"
    /// An ephemeral `URLSession`, `dataTask` with a completion handler wrapped in a continuation.
    case rawURLSession = "raw-urlsession"
    /// swift-openapi-runtime's `UniversalClient` on swift-openapi-async-http-client's transport, as generated code
    /// calls it, over an `HTTPClient` with raw AHC's pool settings.
    case openapiAHC = "openapi-ahc"
    /// The same generated-code path on CourierOpenAPI's `CourierTransport`, over Courier's default pipeline on
    /// ``CourierAsyncHTTPClient/AsyncHTTPClientTransport`` (the same pool size as `openapi-ahc`).
    case openapiCourier = "openapi-courier"
    /// Courier's default pipeline on a transport that answers at once, without a network (``InstantTransport``): what
    /// the pipeline alone costs, with no event loop, socket or timer thread to make the count vary from run to run.
    /// For `Benchmarks/count-instructions --clients courier-instant`; not in the timed matrix by default.
    case courierInstant = "courier-instant"

    /// The clients the matrix measures when `--clients` does not say.
    static var matrixDefault: [ClientKind] {
        allCases.filter { ![.courierInstant, .rawAHCDelegate, .rawAHCDelegateIdle].contains($0) }
    }

    /// The client a client is compared with (its raw transport, or for `openapi-courier` the official OpenAPI
    /// transport); `nil` for the raw clients themselves.
    var baseline: ClientKind? {
        switch self {
        case .openapiCourier: .openapiAHC
        case .courierAHC, .openapiAHC: .rawAHC
        case .courierURLSession: .rawURLSession
        case .rawAHC, .rawAHCIdle, .rawAHCTask, .rawAHCDelegate, .rawAHCDelegateIdle, .courierTransport, .rawURLSession,
            .courierInstant:
            nil
        }
    }
}

/// One client under test: sends `GET /tiny` and, when asked, decodes the body.
protocol LoopbackClient: Sendable {
    /// Sends one request and reads the whole body; decodes it as ``TinyPayload`` when `decode` is `true`.
    ///
    /// - Throws: The client's own error, or ``LoopbackError/unexpectedStatus(_:)`` for a status other than 200.
    func fetch(decode: Bool) async throws

    /// Releases the client's connections; the client is not used afterwards.
    func shutdown() async
}

/// A failure the raw clients report themselves (Courier reports its own ``Courier/CourierError``).
enum LoopbackError: Error, CustomStringConvertible {
    /// The server answered with this status instead of 200.
    case unexpectedStatus(Int)

    var description: String {
        switch self {
        case .unexpectedStatus(let status): "unexpected status \(status)"
        }
    }
}

/// The ~100-byte JSON body the `/tiny` route returns, and what the decoding cells decode it into.
struct TinyPayload: Decodable, Sendable {
    /// A nested object, so decoding is not a single flat container.
    struct Owner: Decodable, Sendable {
        let login: String
        let id: Int
    }

    /// The body `/tiny` answers with, verbatim.
    static let json =
        #"{"id":42,"name":"courier","active":true,"score":0.75,"tags":["http","swift"],"#
        + #""owner":{"login":"octocat","id":1}}"#

    let id: Int
    let name: String
    let active: Bool
    let score: Double
    let tags: [String]
    let owner: Owner
}

/// `GET /tiny`, body returned as `Data` (Courier's `DataParser`): the "no decode" cells.
struct TinyDataRequest: Request {
    typealias Response = Data
    var path: String { "/tiny" }
}

/// `GET /tiny`, decoded as ``TinyPayload`` with the client's `JSONDecoder` (Courier's `JSONParser`).
struct TinyDecodedRequest: Request {
    typealias Response = TinyPayload
    var path: String { "/tiny" }
}

/// Courier's ``Courier/Client`` with its default configuration: user agent, redirects, retries, status validation.
struct CourierLoopbackClient: LoopbackClient {
    let client: Client

    func fetch(decode: Bool) async throws {
        if decode {
            _ = try await client.send(TinyDecodedRequest())
        } else {
            _ = try await client.send(TinyDataRequest())
        }
    }

    func shutdown() async {}
}

/// Courier's AsyncHTTPClient transport driven directly (`courier-transport`): no adapters, no validation, no
/// decisions, no call record; the request is built once, as the pipeline would hand it over.
struct TransportLoopbackClient: LoopbackClient {
    let transport: AsyncHTTPClientTransport
    let request: OutgoingRequest
    /// The default context, trusting the endpoint's root over TLS (as `courier-ahc`'s client configuration does).
    let context: TransportContext
    let decoder = JSONDecoder()

    init(url: URL, connections: Int, tls: TLSOptions?) {
        transport = AsyncHTTPClientTransport(configuration: .init(maxConnectionsPerHost: connections))
        request = OutgoingRequest(head: HTTPRequest(method: .get, url: url))
        context = TransportContext(tls: tls ?? .default)
    }

    func fetch(decode: Bool) async throws {
        let response = try await transport.send(request, context: context)
        let body = try await response.body.collect(upTo: Client.Configuration.defaultMaxResponseBodySize)
        guard response.head.status == .ok else { throw LoopbackError.unexpectedStatus(response.head.status.code) }
        if decode {
            _ = try decoder.decode(TinyPayload.self, from: body)
        }
    }

    func shutdown() async {}
}

/// AsyncHTTPClient used directly, configured as ``CourierAsyncHTTPClient/AsyncHTTPClientTransport`` configures
/// its own `HTTPClient` (pool size, idle timeout, redirects off, decompression limited to a ratio of 100).
///
/// Over TLS the client's own `tlsConfiguration` trusts the endpoint's root alone (TLS 1.2 or later, as the
/// transport's), and `httpVersion` is `.http1Only` for ``WireProtocol/https``, `.automatic` for ``WireProtocol/h2``.
struct RawAHCLoopbackClient: LoopbackClient {
    let http: HTTPClient
    let url: String
    let decoder = JSONDecoder()
    /// Whether each request runs in a child task of its own (`raw-ahc-task`).
    let taskPerRequest: Bool

    init(
        url: URL, connections: Int, tls: ServerHost.Endpoint.ClientTLS? = nil, readTimeout: TimeAmount? = nil,
        taskPerRequest: Bool = false
    ) {
        self.http = Self.makeHTTPClient(connections: connections, tls: tls, readTimeout: readTimeout)
        self.url = url.absoluteString
        self.taskPerRequest = taskPerRequest
    }

    /// An `HTTPClient` with the transport's settings, `connections` connections per host, the given read timeout
    /// and, for a TLS endpoint, its trust and HTTP version.
    static func makeHTTPClient(
        connections: Int, tls: ServerHost.Endpoint.ClientTLS? = nil, readTimeout: TimeAmount? = nil
    ) -> HTTPClient {
        var pool = HTTPClient.Configuration.ConnectionPool(
            idleTimeout: .seconds(60),
            concurrentHTTP1ConnectionsPerHostSoftLimit: connections
        )
        pool.retryConnectionEstablishment = true
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10), read: readTimeout),
            connectionPool: pool,
            decompression: .enabled(limit: .ratio(100))
        )
        if let tls {
            configuration.tlsConfiguration = tls.configuration
            configuration.httpVersion = tls.httpVersion
        }
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func fetch(decode: Bool) async throws {
        if taskPerRequest {
            async let fetched: Void = fetchInPlace(decode: decode)
            try await fetched
        } else {
            try await fetchInPlace(decode: decode)
        }
    }

    private func fetchInPlace(decode: Bool) async throws {
        let response = try await http.execute(HTTPClientRequest(url: url), deadline: .distantFuture)
        let body = try await response.body.collect(upTo: Client.Configuration.defaultMaxResponseBodySize)
        guard response.status == .ok else { throw LoopbackError.unexpectedStatus(Int(response.status.code)) }
        if decode {
            _ = try decoder.decode(TinyPayload.self, from: body)
        }
    }

    func shutdown() async {
        try? await http.shutdown()
    }
}

/// An ephemeral `URLSession` used the way most code uses `URLSession.shared`: one `dataTask` per request.
struct RawURLSessionLoopbackClient: LoopbackClient {
    let session = URLSession(configuration: .ephemeral)
    let url: URL
    let decoder = JSONDecoder()

    func fetch(decode: Bool) async throws {
        let request = URLRequest(url: url)
        let data: Data = try await withCheckedThrowingContinuation { continuation in
            let task = session.dataTask(with: request) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                } else if let status = (response as? HTTPURLResponse)?.statusCode, status != 200 {
                    continuation.resume(throwing: LoopbackError.unexpectedStatus(status))
                } else {
                    continuation.resume(returning: data ?? Data())
                }
            }
            task.resume()
        }
        if decode {
            _ = try decoder.decode(TinyPayload.self, from: data)
        }
    }

    func shutdown() async {
        session.invalidateAndCancel()
    }
}

/// Creates the client of `kind` for `endpoint`.
///
/// - Parameters:
///   - kind: Which client; over TLS only the AsyncHTTPClient ones (see ``WireProtocol/supports(_:)``).
///   - endpoint: The server; requests go to `/tiny` under its base URL, trusting its root over TLS.
///   - connections: Connections per host for the AsyncHTTPClient clients.
/// - Returns: A client ready to send.
/// - Throws: ``ClientTLSError`` when the endpoint's root does not parse, or `kind` cannot speak its protocol.
func makeClient(_ kind: ClientKind, endpoint: ServerHost.Endpoint, connections: Int) throws -> any LoopbackClient {
    let baseURL = endpoint.baseURL
    let tinyURL = baseURL.appendingPathComponent("tiny")
    guard endpoint.wire.supports(kind) else { throw ClientTLSError.unsupported(kind, endpoint.wire) }
    switch kind {
    case .courierAHC, .openapiCourier:
        let transport = AsyncHTTPClientTransport(configuration: .init(maxConnectionsPerHost: connections))
        var configuration = Client.Configuration()
        if let options = try endpoint.courierTLSOptions() {
            configuration.tls = options
        }
        let client = Client(server: Server(baseURL: baseURL), transport: transport, configuration: configuration)
        if kind == .openapiCourier { return OpenAPILoopbackClient(baseURL: baseURL, courier: client) }
        return CourierLoopbackClient(client: client)
    case .rawAHC:
        return RawAHCLoopbackClient(url: tinyURL, connections: connections, tls: try endpoint.clientTLS())
    case .rawAHCIdle, .rawAHCTask:
        return RawAHCLoopbackClient(
            url: tinyURL, connections: connections, tls: try endpoint.clientTLS(), readTimeout: .seconds(60),
            taskPerRequest: kind == .rawAHCTask)
    case .rawAHCDelegate:
        return RawAHCDelegateLoopbackClient(
            http: RawAHCLoopbackClient.makeHTTPClient(connections: connections), url: tinyURL.absoluteString)
    case .rawAHCDelegateIdle:
        return RawAHCDelegateLoopbackClient(
            http: RawAHCLoopbackClient.makeHTTPClient(connections: connections), url: tinyURL.absoluteString,
            idle: .seconds(60))
    case .courierTransport:
        return TransportLoopbackClient(url: tinyURL, connections: connections, tls: try endpoint.courierTLSOptions())
    case .courierURLSession:
        return CourierLoopbackClient(client: Client(server: Server(baseURL: baseURL), transport: URLSessionTransport()))
    case .rawURLSession:
        return RawURLSessionLoopbackClient(url: tinyURL)
    case .openapiAHC:
        return OpenAPILoopbackClient(baseURL: baseURL, connections: connections, tls: try endpoint.clientTLS())
    case .courierInstant:
        return CourierLoopbackClient(client: Client(server: Server(baseURL: baseURL), transport: InstantTransport()))
    }
}

/// A transport that answers every request at once with `200` and ``TinyPayload/json``, without a network
/// (`courier-instant`).
struct InstantTransport: Transport {
    let head = HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"])
    let body = Array(TinyPayload.json.utf8)

    func send(_ request: OutgoingRequest, context: TransportContext) async throws -> TransportResponse {
        TransportResponse(head: head, body: MessageBody(body))
    }
}

/// AsyncHTTPClient's delegate-based API (`raw-ahc-delegate`, and with `idle`, `raw-ahc-delegate-idle`).
struct RawAHCDelegateLoopbackClient: LoopbackClient {
    let http: HTTPClient
    let url: String
    let decoder = JSONDecoder()
    /// With a value, the request goes through an ``IdleWatchingCollector`` with this idle timeout, under a
    /// task-cancellation handler; without, through `execute(request:deadline:)`.
    var idle: TimeAmount? = nil

    func fetch(decode: Bool) async throws {
        let request = try HTTPClient.Request(url: url)
        let status: HTTPResponseStatus
        let body: ByteBuffer?
        if let idle {
            let task = http.execute(request: request, delegate: IdleWatchingCollector(idle: idle), deadline: nil)
            (status, body) = try await withTaskCancellationHandler {
                try await task.futureResult.get()
            } onCancel: {
                task.cancel()
            }
        } else {
            let response = try await http.execute(request: request, deadline: nil).get()
            (status, body) = (response.status, response.body)
        }
        guard status == .ok else { throw LoopbackError.unexpectedStatus(Int(status.code)) }
        if decode, let body {
            _ = try decoder.decode(TinyPayload.self, from: body)
        }
    }

    func shutdown() async {
        try? await http.shutdown()
    }
}

/// A delegate that collects the response and fails it with `HTTPClientError.readTimeout` when no byte of it arrived
/// for `idle`: one timer per request, armed when the request is sent; each read records its time, and the timer, when
/// it fires before the last read's time plus `idle`, is armed again for then (Netty's `IdleStateHandler` works so).
///
/// `@unchecked Sendable`: AsyncHTTPClient calls every method on the task's event loop, one at a time, and the timer
/// runs on that loop too, so the mutable state is never touched from two threads.
final class IdleWatchingCollector: HTTPClientResponseDelegate, @unchecked Sendable {
    typealias Response = (HTTPResponseStatus, ByteBuffer)
    let idle: TimeAmount
    var status: HTTPResponseStatus = .ok
    var body = ByteBuffer()
    var lastRead = NIODeadline.uptimeNanoseconds(0)
    var timer: Scheduled<Void>?

    init(idle: TimeAmount) { self.idle = idle }

    func didSendRequest(task: HTTPClient.Task<Response>) {
        lastRead = .now()
        arm(task, at: lastRead + idle)
    }

    private func arm(_ task: HTTPClient.Task<Response>, at deadline: NIODeadline) {
        timer = task.eventLoop.scheduleTask(deadline: deadline) { [self] in
            let due = lastRead + idle
            if due > .now() { arm(task, at: due) } else { task.fail(reason: HTTPClientError.readTimeout) }
        }
    }

    func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        status = head.status
        lastRead = .now()
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ part: ByteBuffer) -> EventLoopFuture<Void> {
        var part = part
        body.writeBuffer(&part)
        lastRead = .now()
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveError(task: HTTPClient.Task<Response>, _ error: Error) {
        timer?.cancel()
        timer = nil
    }

    func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response {
        timer?.cancel()
        timer = nil
        return (status, body)
    }
}
