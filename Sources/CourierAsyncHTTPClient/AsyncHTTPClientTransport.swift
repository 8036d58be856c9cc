public import AsyncHTTPClient
public import Courier
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPCompression

/// A ``Courier/Transport`` over AsyncHTTPClient: the default on Linux and servers.
///
/// It streams request and response bodies, never follows redirects (Courier's redirect decision does, the same
/// way on every transport), and decompresses only within a limit. Task cancellation cancels the request
/// promptly; the request's deadline (``Courier/TransportContext/deadline``) bounds the whole exchange, and
/// ``Configuration/connectTimeout`` bounds connection establishment.
///
/// ```swift
/// let client = Client(server: production, transport: AsyncHTTPClientTransport())
/// ```
///
/// By default all transports created with ``init(configuration:)`` and the same configuration share one
/// `HTTPClient` per process (like `HTTPClient.shared`, but with redirects off). Pass your own `HTTPClient` with
/// ``init(client:)`` to control its lifetime; create it with `redirectConfiguration: .disallow`.
public struct AsyncHTTPClientTransport: Transport {
    /// Settings for the `HTTPClient` the transport creates.
    public struct Configuration: Hashable, Sendable {
        /// How long establishing a connection may take. Default: 10 s.
        public var connectTimeout: Duration
        /// How long the connection may be idle while reading a response. Default: none (the request's deadline
        /// applies).
        public var readTimeout: Duration?
        /// Connections kept per host. Default: 8.
        public var maxConnectionsPerHost: Int
        /// How long idle pooled connections stay open. Default: 60 s.
        public var idleTimeout: Duration
        /// The most a compressed response may inflate, as a multiple of its compressed size; `nil` disables
        /// decompression (bodies arrive as sent). Default: 100.
        public var decompressionRatioLimit: Int?

        /// Creates a configuration.
        public init(
            connectTimeout: Duration = .seconds(10),
            readTimeout: Duration? = nil,
            maxConnectionsPerHost: Int = 8,
            idleTimeout: Duration = .seconds(60),
            decompressionRatioLimit: Int? = 100
        ) {
            self.connectTimeout = connectTimeout
            self.readTimeout = readTimeout
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.idleTimeout = idleTimeout
            self.decompressionRatioLimit = decompressionRatioLimit
        }

        var clientConfiguration: HTTPClient.Configuration {
            var pool = HTTPClient.Configuration.ConnectionPool(
                idleTimeout: .nanoseconds(Self.nanoseconds(idleTimeout)),
                concurrentHTTP1ConnectionsPerHostSoftLimit: maxConnectionsPerHost
            )
            pool.retryConnectionEstablishment = true
            return HTTPClient.Configuration(
                redirectConfiguration: .disallow,
                timeout: .init(
                    connect: .nanoseconds(Self.nanoseconds(connectTimeout)),
                    read: readTimeout.map { .nanoseconds(Self.nanoseconds($0)) }
                ),
                connectionPool: pool,
                decompression: decompressionRatioLimit.map { .enabled(limit: .ratio($0)) } ?? .disabled
            )
        }

        static func nanoseconds(_ duration: Duration) -> Int64 {
            let (seconds, attoseconds) = duration.components
            return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        }
    }

    private let client: HTTPClient
    private let decompresses: Bool

    /// Creates a transport on the process-wide client for `configuration`.
    public init(configuration: Configuration = Configuration()) {
        self.client = SharedClients.client(for: configuration)
        self.decompresses = configuration.decompressionRatioLimit != nil
    }

    /// Creates a transport on your own `HTTPClient`, which you shut down.
    ///
    /// The client must not follow redirects (`redirectConfiguration: .disallow`): when it does, the call fails
    /// with ``Courier/CourierError/Code/unsupported`` rather than bypass Courier's redirect rules.
    ///
    /// - Parameters:
    ///   - client: The client to send with.
    ///   - decompresses: Whether the client was configured to decompress (so `Content-Length` no longer
    ///     describes the body it delivers).
    public init(client: HTTPClient, decompresses: Bool = false) {
        self.client = client
        self.decompresses = decompresses
    }

    /// Sends the request and returns once the response head arrives; the body streams afterwards.
    public func send(_ request: OutgoingRequest, context: TransportContext) async throws -> TransportResponse {
        let ahcRequest = try Self.makeRequest(request)
        let deadline = context.deadline.map(Self.nioDeadline) ?? .distantFuture
        let response: HTTPClientResponse
        do {
            response = try await client.execute(ahcRequest, deadline: deadline, logger: context.logger)
        } catch {
            let translated = Self.translate(error, deadlineSet: context.deadline != nil)
            guard (translated as? CourierError)?.code == .connectionFailed, Self.canResendSilently(request) else {
                throw translated
            }
            // The connection failed before any response byte arrived, typically a pooled connection the server
            // closed while idle (reliability row 25): an idempotent request goes once more on a fresh connection,
            // as OkHttp does. A second failure is reported.
            context.logger.debug("resending once after a connection failure before the response", metadata: [:])
            do {
                response = try await client.execute(
                    try Self.makeRequest(request), deadline: deadline, logger: context.logger)
            } catch {
                throw Self.translate(error, deadlineSet: context.deadline != nil)
            }
        }
        guard response.history.count <= 1 else {
            throw CourierError(
                code: .unsupported,
                stage: .transport,
                message: "the HTTPClient followed a redirect itself; create it with redirectConfiguration: .disallow"
            )
        }
        let head = Self.makeResponseHead(response)
        var length = MessageBody.Length.unknown
        let encoded = head.headerFields[.contentEncoding].map { !$0.isEmpty && $0 != "identity" } ?? false
        if !(decompresses && encoded), let value = head.headerFields[.contentLength], let count = Int64(value) {
            length = .known(count)
        }
        let body = MessageBody(
            ResponseBodySequence(base: response.body, deadlineSet: context.deadline != nil),
            length: length,
            iterationBehavior: .single
        )
        return TransportResponse(head: head, body: body)
    }

    /// Idempotent, and its body (if any) can be sent again.
    static func canResendSilently(_ request: OutgoingRequest) -> Bool {
        let idempotent: Set<HTTPRequest.Method> = [.get, .head, .options, .put, .delete, .trace]
        return idempotent.contains(request.head.method) && (request.body?.isReplayable ?? true)
    }

    private static func nioDeadline(_ instant: ContinuousClock.Instant) -> NIODeadline {
        let remaining = ContinuousClock.now.duration(to: instant)
        return .now() + .nanoseconds(max(0, Configuration.nanoseconds(remaining)))
    }
}

/// One `HTTPClient` per distinct configuration, for the life of the process.
enum SharedClients {
    private static let clients = LockedBox<[AsyncHTTPClientTransport.Configuration: HTTPClient]>([:])

    static func client(for configuration: AsyncHTTPClientTransport.Configuration) -> HTTPClient {
        clients.withLock { clients in
            if let client = clients[configuration] { return client }
            let client = HTTPClient(
                eventLoopGroupProvider: .singleton, configuration: configuration.clientConfiguration)
            clients[configuration] = client
            return client
        }
    }
}
