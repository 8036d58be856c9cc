#if AsyncHTTPClient
    public import AsyncHTTPClient
    public import CourierCore
    import Foundation
    import HTTPTypes
    import Logging
    import NIOCore
    import NIOHTTP1
    import NIOHTTPCompression

    /// A `Transport` over AsyncHTTPClient: the default on Linux and servers.
    ///
    /// It streams request and response bodies, never follows redirects (Courier's redirect decision does, the same
    /// way on every transport), and decompresses only within a limit. Task cancellation cancels the request
    /// promptly; the request's deadline (`TransportContext.deadline`) bounds the whole exchange, and
    /// ``Configuration/connectTimeout`` bounds connection establishment.
    ///
    /// ```swift
    /// let client = Client(server: production, transport: AsyncHTTPClientTransport())
    /// ```
    ///
    /// By default all transports created with ``init(configuration:)`` and the same configuration share one
    /// `HTTPClient` per process (like `HTTPClient.shared`, but with redirects off). Pass your own `HTTPClient` with
    /// ``init(client:decompresses:)`` to control its lifetime; create it with `redirectConfiguration: .disallow`.
    ///
    /// ## Tracing
    ///
    /// The clients this transport makes, with ``init(configuration:)`` or ``init(clientConfiguration:)``, have
    /// AsyncHTTPClient's own tracing off (`tracing.tracer = nil`): Courier's tracing monitor (`TracingMonitor`, in
    /// CourierObservability) makes the spans, an `internal` span per call and a `client` span per attempt, and injects
    /// the attempt's `traceparent`. With AsyncHTTPClient's tracing on as well, each attempt would get a second `client`
    /// span (not a child of the call's) and a second `traceparent` header. A client you pass to ``init(client:decompresses:)`` is
    /// used as configured: create it with `configuration.tracing.tracer = nil` when you trace with Courier.
    public struct AsyncHTTPClientTransport: Transport {
        /// Settings for the `HTTPClient` the transport creates.
        ///
        /// The three timeouts mean the same on every Courier transport: ``connectTimeout`` bounds establishing a
        /// connection (TCP and TLS), ``idleTimeout`` bounds the silence between two bytes of the response (the head
        /// included), and the call's deadline (`Request.timeout`) bounds the whole call, retries and backoff
        /// included. Each expiry has its own code: `CourierError.Code.connectTimeout`,
        /// `CourierError.Code.idleTimeout`, `CourierError.Code.timedOut`.
        public struct Configuration: Hashable, Sendable {
            /// How long establishing a connection (TCP connect and TLS handshake) may take. Default: 10 s.
            ///
            /// A failed connection attempt is reported at once, never retried inside the connection pool: whether
            /// the call is tried again is the `RetryPolicy`'s decision, so a refused port fails in the time
            /// the network took.
            public var connectTimeout: Duration
            /// How long the response may be silent: no byte of the head or the body for this long fails the call
            /// with `CourierError.Code.idleTimeout`. `nil` disables it. Default: 60 s (URLSession's and
            /// Alamofire's request timeout).
            ///
            /// It also bounds an upload that stalls: a server that takes no part of a streamed (or large in-memory)
            /// request body for this long fails the call with the same code. The response's silence is counted
            /// from the end of the upload, as a large body goes out in slices the connection takes as it can.
            ///
            /// A body read chunk by chunk (a `LiveResponse`, an event stream, a download) may be held back by its
            /// reader for longer: the transport reads ahead for it, up to 4 MiB, so that the time it holds back is
            /// not taken for the server's silence (AsyncHTTPClient's own timer counted it, as it stops reading while
            /// the reader does). Past 4 MiB read ahead, a reader that still holds back for this long gets
            /// `CourierError.Code.idleTimeout`, saying so. Not over HTTP/2, nor for a body AsyncHTTPClient
            /// decompresses, where one read may hand over more than that: there, holding back counts as silence.
            public var idleTimeout: Duration?
            /// Connections kept per host. Default: 8.
            ///
            /// A call beyond that many waits for a free connection for as long as its deadline allows (none by
            /// default), as in URLSession's and OkHttp's queues. AsyncHTTPClient alone would fail it after the
            /// connect timeout.
            public var maxConnectionsPerHost: Int
            /// How long an idle pooled connection stays open for reuse. Default: 60 s.
            public var keepAliveTimeout: Duration
            /// The most a compressed response may inflate, as a multiple of its compressed size; `nil` disables
            /// decompression (bodies arrive as sent). Default: 100. Values below 1 count as 1, and values above
            /// 16,777,216 (2^24) as that: NIO multiplies the compressed size by it, and `Int.max` (meaning "no
            /// limit") overflowed there, a crash on the first compressed response.
            public var decompressionRatioLimit: Int?

            /// `ratio` within what NIO's check can multiply without overflow (for bodies under 512 GiB compressed).
            static func clampedRatio(_ ratio: Int) -> Int { min(max(ratio, 1), 1 << 24) }

            /// Creates a configuration.
            public init(
                connectTimeout: Duration = .seconds(10),
                idleTimeout: Duration? = .seconds(60),
                maxConnectionsPerHost: Int = 8,
                keepAliveTimeout: Duration = .seconds(60),
                decompressionRatioLimit: Int? = 100
            ) {
                self.connectTimeout = connectTimeout
                self.idleTimeout = idleTimeout
                self.maxConnectionsPerHost = maxConnectionsPerHost
                self.keepAliveTimeout = keepAliveTimeout
                self.decompressionRatioLimit = decompressionRatioLimit
            }

            /// The idle timeout under its former name.
            @available(*, deprecated, renamed: "idleTimeout")
            public var readTimeout: Duration? {
                get { idleTimeout }
                set { idleTimeout = newValue }
            }

            var clientConfiguration: HTTPClient.Configuration {
                var pool = HTTPClient.Configuration.ConnectionPool(
                    idleTimeout: .nanoseconds(Self.nanoseconds(keepAliveTimeout)),
                    concurrentHTTP1ConnectionsPerHostSoftLimit: maxConnectionsPerHost
                )
                // A failed connection attempt fails the request at once; the pool's own retry loop would hide a
                // refused port or a bad certificate until the connect timeout (60 s with Courier's retries on top).
                pool.retryConnectionEstablishment = false
                var configuration = HTTPClient.Configuration(
                    redirectConfiguration: .disallow,
                    timeout: .init(
                        connect: .nanoseconds(Self.nanoseconds(connectTimeout)),
                        read: idleTimeout.map { .nanoseconds(Self.nanoseconds($0)) }
                    ),
                    connectionPool: pool,
                    decompression: decompressionRatioLimit.map { .enabled(limit: .ratio(Self.clampedRatio($0))) }
                        ?? .disabled
                )
                configuration.tracing.tracer = nil
                configuration.tlsConfiguration = TLSMapping.baseConfiguration
                return configuration
            }

            var timeouts: Timeouts { Timeouts(connect: connectTimeout, idle: idleTimeout) }

            static func nanoseconds(_ duration: Duration) -> Int64 {
                let (seconds, attoseconds) = duration.components
                return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
            }
        }

        private let client: HTTPClient
        /// The twin of an owned ``client`` for ``RequestLane/priority`` requests (its own pool, the same settings);
        /// `nil` for a client passed in, which then serves them too.
        private let priorityClient: HTTPClient?
        /// The configuration of the process-wide client, for its HTTP/1.1-only twin
        /// (`TLSOptions.HTTPVersions.http1Only`); `nil` for a client passed in, which then serves such requests
        /// too.
        private let sharedConfiguration: Configuration?
        private let decompresses: Bool
        private let timeouts: Timeouts
        /// Whether ``shutdown()`` shuts ``client`` down: only for a client made by ``init(clientConfiguration:)``.
        private let ownsClient: Bool
        /// What per-request TLS configurations start from on a client made by ``init(clientConfiguration:)`` (that
        /// configuration's TLS settings); `nil` otherwise.
        private let tlsBase: TLSMapping.Base?
        /// On a client made by ``init(clientConfiguration:)``: whether that configuration offers HTTP/1.1 only, and
        /// whether it goes through a proxy. `nil` otherwise (the process-wide client's are known; a client passed in
        /// cannot be read).
        private let ownSettings: (http1Only: Bool, proxied: Bool)?

        /// Creates a transport on the process-wide client for `configuration`.
        public init(configuration: Configuration = Configuration()) {
            self.client = SharedClients.client(for: configuration, http1Only: false)
            self.priorityClient = nil
            self.sharedConfiguration = configuration
            self.decompresses = configuration.decompressionRatioLimit != nil
            self.timeouts = configuration.timeouts
            self.ownsClient = false
            self.tlsBase = nil
            self.ownSettings = nil
        }

        /// Creates a transport that owns a new `HTTPClient` made from your AsyncHTTPClient configuration (its pool,
        /// timeouts, TLS, proxy, decompression and HTTP version as you set them: an https request with
        /// `TLSOptions.httpVersions = .http1Only` fails with `unsupported` unless its `httpVersion` is `.http1Only`;
        /// its proxy counts as a proxy, so no insecure-loopback relaxation goes through it), except that redirects are left to Courier
        /// (`redirectConfiguration` becomes `.disallow`) and so is tracing (`tracing.tracer` becomes `nil`: Courier's
        /// tracing monitor makes one span per attempt, see Tracing in ``AsyncHTTPClientTransport``).
        ///
        /// TLS: your `tlsConfiguration` (or NIOSSL's default when it is `nil`) is what every connection starts from,
        /// and a request's `TLSOptions` (trust, pins, client identity) are applied on top of it. Its minimum version
        /// is raised to TLS 1.2 when it is lower, as `TLSOptions` requires by default (NIOSSL's
        /// `makeClientConfiguration()` accepts TLS 1.0); lower `TLSOptions.minimumVersion` for a server that needs
        /// an older version.
        ///
        /// Shut it down with ``shutdown()``, or run the transport as a swift-service-lifecycle `Service` in your
        /// server's `ServiceGroup`: it then shuts its client down on graceful shutdown.
        ///
        /// ```swift
        /// var configuration = HTTPClient.Configuration(timeout: .init(connect: .seconds(5)))
        /// configuration.httpVersion = .http1Only
        /// let transport = AsyncHTTPClientTransport(clientConfiguration: configuration)
        /// let services = ServiceGroup(services: [transport, app], logger: logger)  // shut down with the app
        /// ```
        public init(clientConfiguration: HTTPClient.Configuration) {
            var configuration = clientConfiguration
            configuration.redirectConfiguration = .disallow
            configuration.tracing.tracer = nil
            let tlsBase = TLSMapping.Base(configuration.tlsConfiguration)
            configuration.tlsConfiguration = tlsBase.configuration
            self.tlsBase = tlsBase
            self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            self.priorityClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            self.sharedConfiguration = nil
            if case .enabled = configuration.decompression {
                self.decompresses = true
            } else {
                self.decompresses = false
            }
            self.timeouts = Timeouts(
                connect: configuration.timeout.connect.map { .nanoseconds($0.nanoseconds) },
                idle: configuration.timeout.read.map { .nanoseconds($0.nanoseconds) }
            )
            self.ownsClient = true
            self.ownSettings = (configuration.httpVersion == .http1Only, configuration.proxy != nil)
        }

        /// Shuts down the `HTTPClient` this transport owns (one made by ``init(clientConfiguration:)``): calls in flight
        /// fail, later ones fail with `CourierError.Code.transportFailed`. Does nothing for the process-wide
        /// client of ``init(configuration:)`` or a client passed to ``init(client:decompresses:)`` (yours to shut down).
        public func shutdown() async throws {
            guard ownsClient else { return }
            try await client.shutdown()
            try await priorityClient?.shutdown()
        }

        /// Creates a transport on your own `HTTPClient`, which you shut down.
        ///
        /// The client must not follow redirects (`redirectConfiguration: .disallow`): when it does, the call fails
        /// with `CourierError.Code.unsupported` rather than bypass Courier's redirect rules. Its tracing is
        /// left as you configured it: AsyncHTTPClient's default traces every request with the global tracer, which
        /// next to Courier's tracing monitor adds a second span and a second `traceparent` per attempt, so set
        /// `configuration.tracing.tracer = nil` on a client you trace with Courier.
        ///
        /// TLS: a request with default `TLSOptions` uses the client's own TLS configuration, which Courier cannot
        /// read. AsyncHTTPClient's default (`tlsConfiguration` left `nil`) accepts TLS 1.0, so set
        /// `tlsConfiguration.minimumTLSVersion = .tlsv12` on a client you pass in, or use
        /// ``init(clientConfiguration:)``, which does it for you. A request with other `TLSOptions` gets a
        /// configuration built from TLS 1.2 and the system's roots, as on the process-wide client.
        ///
        /// - Parameters:
        ///   - client: The client to send with.
        ///   - decompresses: Whether the client was configured to decompress (so `Content-Length` no longer
        ///     describes the body it delivers).
        public init(client: HTTPClient, decompresses: Bool = false) {
            self.client = client
            self.priorityClient = nil
            self.sharedConfiguration = nil
            self.decompresses = decompresses
            self.timeouts = Timeouts(connect: nil, idle: nil)
            self.ownsClient = false
            self.tlsBase = nil
            self.ownSettings = nil
        }

        /// Sends the request and returns once the response head arrives; the body streams afterwards.
        ///
        /// Inlined, with `send(_:route:context:)`, into `Transport.send`'s witness: each async function a call waits
        /// in is a frame from the task allocator's 1 KiB slabs, and one frame fewer is one slab fewer per call in
        /// flight (issue #17).
        @inline(__always)
        public func send(_ request: OutgoingRequest, context: TransportContext) async throws -> TransportResponse {
            // The choice of client and the request's conversion run in synchronous functions: an async function
            // keeps every local that crosses its `await` in a frame on the heap for as long as the call is in flight
            // (an `HTTPClientRequest` is 344 bytes, its TLS configuration 234), and a call waiting for a connection
            // or its answer should hold no more than it needs (issue #17).
            let route = try route(for: request, context: context)
            return try await send(request, route: route, context: context)
        }

        /// Where a request goes: the client (pool) that sends it, and what its failures are diagnosed against.
        private struct Route {
            let client: HTTPClient
            let secure: Bool
            /// Through a proxy on a shared client: keeps that client from being shut down until the response ends.
            var lease: ProxyLease? = nil
            /// Through the proxy of the configuration given to ``init(clientConfiguration:)``.
            var ownProxy = false
            /// Through a proxy: TLS to `localhost` is then the proxy's `localhost`, and a diagnosis must not connect
            /// to the origin directly.
            var proxied: Bool { lease != nil || ownProxy }
        }

        @inline(never)
        private func route(for request: OutgoingRequest, context: TransportContext) throws -> Route {
            let secure = request.head.scheme?.lowercased() == "https"
            // A priority request (a token refresh) on a pool of its own: it must not wait for a connection held by
            // the calls that wait for it.
            var client = self.client
            if context.lane == .priority {
                client =
                    sharedConfiguration.map { SharedClients.client(for: $0, http1Only: false, lane: .priority) }
                    ?? priorityClient ?? self.client
            }
            // HTTP/2 requires TLS 1.2 or later (RFC 9113 §9.2): allowing an older version means offering HTTP/1.1 only.
            let http1Only = context.tls.httpVersions == .http1Only || context.tls.minimumVersion < .tls12
            var proxy: ProxyOptions.Endpoint?
            if !context.proxy.isDirect, let url = request.head.url {
                proxy = try context.proxy.endpoint(for: url)
            }
            // Over TLS only: AsyncHTTPClient speaks HTTP/1.1 in cleartext anyway (no h2c).
            if secure, context.tls.httpVersions == .http1Only, ownSettings?.http1Only == false {
                throw CourierError(
                    code: .unsupported,
                    stage: .transport,
                    message:
                        "unsupported: TLSOptions.httpVersions .http1Only on a transport whose HTTPClient.Configuration "
                        + "offers HTTP/2 (its ALPN wins); set its httpVersion = .http1Only, or use "
                        + "AsyncHTTPClientTransport()"
                )
            }
            if http1Only || proxy != nil {
                guard let sharedConfiguration else {
                    if proxy != nil {
                        throw CourierError(
                            code: .unsupported,
                            stage: .transport,
                            message:
                                "unsupported: a proxy (ProxyOptions) on a transport made from your own HTTPClient; "
                                + "set HTTPClient.Configuration.proxy on that client, or use AsyncHTTPClientTransport()"
                        )
                    }
                    return Route(client: client, secure: secure, ownProxy: ownSettings?.proxied == true)
                }
                guard let proxy else {
                    client = SharedClients.client(for: sharedConfiguration, http1Only: http1Only, lane: context.lane)
                    return Route(client: client, secure: secure)
                }
                let lease = SharedClients.lease(
                    for: sharedConfiguration, http1Only: http1Only, proxy: proxy, lane: context.lane)
                return Route(client: lease.client, secure: secure, lease: lease)
            }
            return Route(client: client, secure: secure, ownProxy: ownSettings?.proxied == true)
        }

        /// AsyncHTTPClient's request for `request`, with the context's TLS settings over https.
        @inline(never)
        private static func makeRequest(
            _ request: OutgoingRequest, route: Route, context: TransportContext, tlsBase: TLSMapping.Base?,
            watch: UploadWatch?
        ) throws -> HTTPClientRequest {
            var ahcRequest = try makeRequest(request, watch: watch)
            if route.secure {
                var options = context.tls
                // Through a proxy, `localhost` is the proxy's: its certificate is checked like any other.
                if route.proxied { options.allowsInsecureLoopback = false }
                ahcRequest.tlsConfiguration = try TLSMapping.configuration(
                    for: options, request: request.head, base: tlsBase)
            }
            return ahcRequest
        }

        @inline(__always)
        private func send(
            _ request: OutgoingRequest, route: Route, context: TransportContext
        ) async throws -> TransportResponse {
            while true {
                do {
                    if let idle = timeouts.idle, Self.needsUploadWatch(request) {
                        return try await exchangeWatchingUpload(request, route: route, context: context, idle: idle)
                    }
                    return try await exchange(request, route: route, context: context)
                } catch let error as HTTPClientError where error == .getConnectionFromPoolTimeout && !Task.isCancelled {
                    // AsyncHTTPClient gives up on a request that waited its connect timeout in the pool's queue
                    // while every connection was busy. Nothing was sent and the server is answering, so the request
                    // waits again: the call's deadline and cancellation bound the wait, as in URLSession's and
                    // OkHttp's queues, and a busy pool is not reported as an unreachable server.
                    continue
                } catch {
                    // A failure of the response's conversion is a CourierError, which `failure` passes on as it is.
                    throw await failure(error, request: request, route: route, context: context)
                }
            }
        }

        /// One exchange through AsyncHTTPClient, up to the response head. A function of its own, without the upload
        /// watch (``exchangeWatchingUpload(_:route:context:idle:)``): AsyncHTTPClient's request (344 bytes) and
        /// response are then in a frame that fits the task allocator's 1 KiB slab. With the busy pool's retry and the
        /// translation of failures, they were one frame of 1,552 bytes, which took a slab of its own for every call
        /// in flight (issue #17).
        @inline(never)
        private func exchange(
            _ request: OutgoingRequest, route: Route, context: TransportContext
        ) async throws -> TransportResponse {
            let response = try await route.client.execute(
                Self.makeRequest(request, route: route, context: context, tlsBase: tlsBase, watch: nil),
                deadline: context.deadline.map(Self.nioDeadline) ?? .distantFuture,
                logger: context.logger
            )
            return try transportResponse(
                response, method: request.head.method, sentBody: request.body != nil, lease: route.lease)
        }

        /// Sends a request whose body AsyncHTTPClient takes in chunks, failing it with `idleTimeout` when the server
        /// stops taking them (``UploadWatch``). A function of its own, so that a call without such a body does not
        /// keep its locals.
        @inline(never)
        private func exchangeWatchingUpload(
            _ request: OutgoingRequest, route: Route, context: TransportContext, idle: Duration
        ) async throws -> TransportResponse {
            let watch = UploadWatch()
            let ahcRequest = try Self.makeRequest(
                request, route: route, context: context, tlsBase: tlsBase, watch: watch)
            let client = route.client
            let deadline = context.deadline.map(Self.nioDeadline) ?? .distantFuture
            let logger = context.logger
            let response = try await Self.watchingUpload(watch, idle: idle) {
                try await client.execute(ahcRequest, deadline: deadline, logger: logger)
            }
            return try transportResponse(
                response, method: request.head.method, sentBody: request.body != nil, lease: route.lease)
        }

        /// A failed attempt's error, translated (and for a TLS failure, diagnosed); a function of its own, so that
        /// its locals are in a frame only when a call fails.
        @inline(never)
        private func failure(
            _ error: any Error, request: OutgoingRequest, route: Route, context: TransportContext
        ) async -> any Error {
            // No silent resend here: a failed attempt goes to Courier's retry decision, which counts it, so the
            // trace's attempts are the requests the server saw.
            let translated = Self.translate(error, phase: .head, timeouts: timeouts)
            let secure = route.secure
            // The diagnosis connects to the server directly, so not when a proxy stands between.
            if secure, !route.proxied, let failure = translated as? CourierError, failure.code == .untrustedCertificate,
                let origin = request.head.url.flatMap(Origin.init(url:))
            {
                return await TLSDiagnosis.refine(
                    failure, host: origin.host, port: origin.port, options: context.tls, base: tlsBase?.configuration)
            }
            // A second reset in a row before any head, over TLS 1.3 without a client certificate, may be a server
            // that wants one (its alert arrives as a closed connection): check once, so it is not retried again.
            if secure, !route.proxied, context.attempt >= 2, context.tls.clientIdentity == nil,
                var failure = translated as? CourierError, failure.code == .connectionReset,
                let origin = request.head.url.flatMap(Origin.init(url:)),
                await TLSDiagnosis.requiresClientCertificate(
                    host: origin.host, port: origin.port, timeout: .seconds(2))
            {
                failure.code = .clientCertificateRejected
                failure.message =
                    "the server requires a client certificate and none is configured (TLSOptions.clientIdentity)"
                return failure
            }
            return translated
        }

        /// Courier's response for AsyncHTTPClient's: its head, and its body as it streams.
        @inline(never)
        private func transportResponse(
            _ response: HTTPClientResponse, method: HTTPRequest.Method, sentBody: Bool, lease: ProxyLease?
        ) throws -> TransportResponse {
            guard response.history.count <= 1 else {
                throw CourierError(
                    code: .unsupported,
                    stage: .transport,
                    message:
                        "the HTTPClient followed a redirect itself; create it with redirectConfiguration: .disallow"
                )
            }
            let converted = Self.makeResponseHead(response)
            let head = converted.head
            if decompresses, converted.isEncoded {
                try Self.checkCodings(head)
            }
            var length = MessageBody.Length.unknown
            if ResponseFraming.hasNoBody(head.status, answering: method) {
                // No body whatever Content-Length says (RFC 9110 §6.4.1): a HEAD of a 5 GB file announces 5 GB.
                length = .known(0)
            } else if !(decompresses && converted.isEncoded), let count = converted.contentLength {
                length = .known(count)
            }
            // A status of 300 or more that came while the request body was still going out (a 413 from nginx's
            // `client_max_body_size`, a 401 before the upload): AsyncHTTPClient stops the upload and closes the
            // HTTP/1.1 connection itself, and closing before it hands over the response's end fails the body with
            // `ioOnClosedChannel`. That is the end of the body, not a lost connection.
            let endsAtOwnClose = sentBody && head.status.code >= 300 && response.version.major == 1
            let body = MessageBody(
                collectable: ResponseBodySequence(
                    base: response.body, timeouts: timeouts, endsAtOwnClose: endsAtOwnClose, lease: lease,
                    paced: response.version.major == 1 && !(decompresses && converted.isEncoded),
                    emptyByHead: decompresses && converted.isEncoded
                        && (length == .known(0) || converted.contentLength == 0)),
                length: length)
            return TransportResponse(head: head, body: body, negotiatedProtocol: Self.protocolName(response.version))
        }

        /// Throws ``CourierError/Code/unsupported`` for codings NIO's decompressor would pass on still encoded: it
        /// decodes the first coding listed, when that is `gzip` or `deflate` (so not `x-gzip`, nor `identity, gzip`).
        /// Not inlined: most responses have no coding.
        @inline(never)
        private static func checkCodings(_ head: HTTPResponse) throws {
            try ContentCodings.check(head)
            // Past the check, at most one coding besides `identity`, and NIO decodes it: unless it is not first.
            let listed = ContentCodings.listed(in: head)
            if listed.first == "identity", listed.contains(where: { $0 != "identity" }) {
                let field = head.headerFields[.contentEncoding] ?? ""
                throw CourierError(
                    code: .unsupported,
                    stage: .transport,
                    message: "unsupported: the response's content codings \"\(field.prefix(64))\" list identity "
                        + "first, and AsyncHTTPClient decodes only a gzip or deflate coding listed first",
                    response: head
                )
            }
        }

        /// `h2` or `http/1.1`, as ALPN names them.
        private static func protocolName(_ version: HTTPVersion) -> String {
            // Constants for the versions there are: an interpolation built a string for every response.
            switch (version.major, version.minor) {
            case (1, 1): "http/1.1"
            case (1, 0): "http/1.0"
            case (let major, _) where major >= 2: "h2"
            default: "http/\(version.major).\(version.minor)"
            }
        }

        private static func nioDeadline(_ instant: ContinuousClock.Instant) -> NIODeadline {
            let remaining = ContinuousClock.now.duration(to: instant)
            return .now() + .nanoseconds(max(0, Configuration.nanoseconds(remaining)))
        }
    }

    /// One `HTTPClient` per distinct configuration, for the life of the process; through a proxy, one per proxy
    /// credential too, at most ``maxCredentialsPerProxy`` of them per proxy.
    enum SharedClients {
        fileprivate struct Key: Hashable {
            let configuration: AsyncHTTPClientTransport.Configuration
            let http1Only: Bool
            let proxy: ProxyOptions.Endpoint?
            let lane: RequestLane

            /// The key without the proxy's credentials: the clients of one proxy, whatever their credentials.
            var proxyServer: Key {
                Key(
                    configuration: configuration, http1Only: http1Only,
                    proxy: proxy.map { ProxyOptions.Endpoint(host: $0.host, port: $0.port) }, lane: lane)
            }
        }

        /// A proxy client and the responses that use it.
        private struct Leased {
            let client: HTTPClient
            var leases = 0
            var lastUse: UInt64 = 0
        }

        private struct State {
            var clients: [Key: HTTPClient] = [:]
            var proxied: [Key: Leased] = [:]
            /// Proxy clients pushed out by newer credentials, by identity, until their last response ends.
            var retiring: [ObjectIdentifier: Leased] = [:]
            var uses: UInt64 = 0
            /// The shutdowns under way, each removing itself when done.
            var shutdowns: [UInt64: Task<Void, Never>] = [:]
            var nextShutdown: UInt64 = 0
        }

        /// Proxy credentials kept per proxy: a process whose proxy credentials rotate (a token as the password)
        /// would otherwise keep a client, and its connection pool, for every credential it ever used. When one more
        /// arrives, the least recently used is shut down once its last response has ended.
        static let maxCredentialsPerProxy = 8

        private static let state = LockedBox(State())

        /// The client for `configuration`, HTTP/1.1 only or not, for `lane`, connecting directly. A priority lane's
        /// pool is its own, so a token request never queues behind the calls it rescues.
        static func client(
            for configuration: AsyncHTTPClientTransport.Configuration,
            http1Only: Bool,
            lane: RequestLane = .standard
        ) -> HTTPClient {
            state.withLock { state in
                let key = Key(configuration: configuration, http1Only: http1Only, proxy: nil, lane: lane)
                if let client = state.clients[key] { return client }
                let client = makeClient(for: key)
                state.clients[key] = client
                return client
            }
        }

        /// A lease on the client that connects through `proxy` with its credentials: a proxy's connections are its
        /// client's alone, so a tunnel is never reused for a direct call, another proxy or other credentials. The
        /// client is not shut down while the lease lives.
        static func lease(
            for configuration: AsyncHTTPClientTransport.Configuration,
            http1Only: Bool,
            proxy: ProxyOptions.Endpoint,
            lane: RequestLane = .standard
        ) -> AsyncHTTPClientTransport.ProxyLease {
            let key = Key(configuration: configuration, http1Only: http1Only, proxy: proxy, lane: lane)
            let client = state.withLock { state in
                state.uses &+= 1
                var leased: Leased
                if let existing = state.proxied[key] {
                    leased = existing
                } else {
                    retireOldest(sharing: key.proxyServer, in: &state)
                    leased = Leased(client: makeClient(for: key))
                }
                leased.leases += 1
                leased.lastUse = state.uses
                state.proxied[key] = leased
                return leased.client
            }
            return AsyncHTTPClientTransport.ProxyLease(key: key, client: client)
        }

        /// Ends a lease: a retired client whose last lease this was is shut down.
        fileprivate static func release(_ key: Key, client: HTTPClient) {
            state.withLock { state in
                if let leased = state.proxied[key], leased.client === client {
                    state.proxied[key]?.leases -= 1
                    return
                }
                let id = ObjectIdentifier(client)
                state.retiring[id]?.leases -= 1
                if let leased = state.retiring[id], leased.leases <= 0 {
                    state.retiring[id] = nil
                    shutDown(leased.client, in: &state)
                }
            }
        }

        /// Makes room for one more credential of `server`'s proxy: past the limit, its least recently used client
        /// goes (at once when no response uses it, else when the last one ends).
        private static func retireOldest(sharing server: Key, in state: inout State) {
            let sameProxy = state.proxied.filter { $0.key.proxyServer == server }
            guard sameProxy.count >= maxCredentialsPerProxy,
                let oldest = sameProxy.min(by: { $0.value.lastUse < $1.value.lastUse })
            else { return }
            state.proxied[oldest.key] = nil
            if oldest.value.leases <= 0 {
                shutDown(oldest.value.client, in: &state)
            } else {
                state.retiring[ObjectIdentifier(oldest.value.client)] = oldest.value
            }
        }

        /// Shuts `client` down in a task of its own. The task removes itself from `state` when done: it needs the
        /// lock, which the caller holds until the task is in.
        private static func shutDown(_ client: HTTPClient, in state: inout State) {
            let id = state.nextShutdown
            state.nextShutdown &+= 1
            state.shutdowns[id] = Task {
                try? await client.shutdown()
                Self.state.withLock { _ = $0.shutdowns.removeValue(forKey: id) }
            }
        }

        private static func makeClient(for key: Key) -> HTTPClient {
            var clientConfiguration = key.configuration.clientConfiguration
            if key.http1Only { clientConfiguration.httpVersion = .http1Only }
            if let proxy = key.proxy {
                clientConfiguration.proxy = .server(
                    host: proxy.host,
                    port: proxy.port,
                    authorization: proxy.credentials.map { .basic(username: $0.username, password: $0.password) }
                )
            }
            return HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        }

        /// For tests: how many clients connect through `proxy`'s host and port (retiring ones included), and waits
        /// for the shutdowns started so far.
        static func proxyClients(
            for configuration: AsyncHTTPClientTransport.Configuration, proxy: ProxyOptions.Endpoint
        ) async -> (live: Int, retiring: Int) {
            let (shutdowns, counts) = state.withLock { state in
                let server = ProxyOptions.Endpoint(host: proxy.host, port: proxy.port)
                let live = state.proxied.keys.filter {
                    $0.configuration == configuration && $0.proxyServer.proxy == server
                }.count
                return (Array(state.shutdowns.values), (live, state.retiring.count))
            }
            for shutdown in shutdowns { await shutdown.value }
            return counts
        }
    }

    extension AsyncHTTPClientTransport {
        /// A response's hold on a shared proxy client (``SharedClients/lease(for:http1Only:proxy:lane:)``), given
        /// back when the response and its body are gone.
        final class ProxyLease: Sendable {
            fileprivate let key: SharedClients.Key
            let client: HTTPClient

            fileprivate init(key: SharedClients.Key, client: HTTPClient) {
                self.key = key
                self.client = client
            }

            deinit { SharedClients.release(key, client: client) }
        }
    }
#endif
