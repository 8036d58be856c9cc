import Foundation
import Logging

/// Sends typed ``Request`` values through Courier's pipeline and returns their typed responses.
///
/// A client is an immutable, `Sendable` value: its servers, transport and ``Configuration``. Copy it freely;
/// ``switching(to:)`` returns a client for another environment that shares the same transport.
///
/// ```swift
/// let client = Client(server: Server(baseURL: url), transport: transport)
/// let value = try await client.send(HTTPBinPost(foo: "bar"))        // value.form.foo == "bar"
/// let task = client.send(HTTPBinPost(foo: "bar")) { result in print(result) }
/// task.cancel()
/// ```
public struct Client: Sendable {
    /// The servers, one per environment.
    public var servers: [Server.Environment: Server] { storage.servers }
    /// The environment requests go to unless they choose another.
    public var environment: Server.Environment { storage.environment }
    /// What sends the requests.
    public var transport: any Transport { storage.transport }
    /// Coders, adapters, decisions, limits and logging.
    public var configuration: Configuration {
        // Borrowed, not copied: a copy retains each of its references, and the pipeline reads it ~20 times a call.
        _read { yield storage.configuration }
    }
    /// Each server's base URL, checked and taken apart once (or why it is unusable).
    var bases: [Server.Environment: Result<RequestResolver.Base, CourierError>] { storage.bases }
    /// Every server, for ``AdapterContext/knownServers``.
    var knownServers: [Server] { storage.knownServers }
    /// The calls in flight, shared with every client derived from this one (for ``cancelAll()``).
    var registry: RequestRegistry { storage.registry }
    /// The configuration's decisions followed by a ``RetryDecision`` for its retry policy (unless the policy retries
    /// nothing or the decisions already retry): the chain of every request that brings no retry of its own.
    var decisionsWithRetry: [any Decision] { storage.decisionsWithRetry }
    /// The configuration's ``Configuration/maxConcurrentRequests`` queue, if it has one.
    var limiter: ConcurrencyLimiter? { storage.limiter }
    /// ``decisionsWithRetry`` followed by the default ``Request/decisions``: the chain of most requests.
    var defaultDecisionChain: [any Decision] { storage.defaultDecisionChain }
    /// Whether the logger writes a call's log line, at ``Configuration/callLogLevel`` or
    /// ``Configuration/failureLogLevel``. For Courier's other modules, which would copy the whole configuration
    /// (`configuration` from another module is a copy, not a borrow) to read three of its fields.
    package var logsCalls: Bool {
        // Either line: `max`, since a logger at `info` writes an `info` success line though failures go at `debug`.
        let level = max(storage.configuration.callLogLevel, storage.configuration.failureLogLevel)
        return storage.configuration.logger.logLevel <= level
    }

    /// Everything a client holds, behind one reference: a client is copied into every call's async frames, and a
    /// configuration is several hundred bytes (issue #17: a frame over the task allocator's slab costs a `malloc`).
    private let storage: Storage

    private final class Storage: Sendable {
        let servers: [Server.Environment: Server]
        let environment: Server.Environment
        let transport: any Transport
        let configuration: Configuration
        let bases: [Server.Environment: Result<RequestResolver.Base, CourierError>]
        let knownServers: [Server]
        let registry: RequestRegistry
        let decisionsWithRetry: [any Decision]
        let defaultDecisionChain: [any Decision]
        let limiter: ConcurrencyLimiter?
        /// The server of ``environment`` and its base, or why there is none: what most requests go to, found without
        /// hashing the environment on every call.
        let defaultServer: Result<(Server, RequestResolver.Base), CourierError>

        init(
            servers: [Server.Environment: Server],
            environment: Server.Environment,
            transport: any Transport,
            configuration: Configuration,
            registry: RequestRegistry,
            limiter sharedLimiter: ConcurrencyLimiter? = nil
        ) {
            self.servers = servers
            self.environment = environment
            self.transport = transport
            self.configuration = configuration
            self.registry = registry
            self.knownServers = Array(servers.values)
            let retryPolicy = configuration.retryPolicy
            if retryPolicy.maxRetries > 0, !configuration.decisions.contains(where: { $0 is RetryDecision }) {
                decisionsWithRetry = RetryDecision.chain(configuration.decisions, retrying: retryPolicy)
            } else {
                decisionsWithRetry = configuration.decisions
            }
            defaultDecisionChain = decisionsWithRetry + defaultRequestDecisions
            limiter = sharedLimiter ?? configuration.maxConcurrentRequests.map { ConcurrencyLimiter(limit: $0) }
            // From the client's creation, not its first call: a sign-in or sign-out before that call (a login
            // screen, an account switch at launch) purges the previous credential's entries too.
            if let cache = configuration.cache {
                for case let adapter as AuthenticationAdapter in configuration.adapters {
                    cache.follow(adapter.authenticator)
                }
            }
            let bases = servers.mapValues { server in
                Result { try RequestResolver.base(of: server, cleartextPolicy: configuration.cleartextPolicy) }
                    .mapError { error in
                        error as? CourierError
                            ?? CourierError(code: .invalidURL, stage: .resolve, message: "\(error)")
                    }
            }
            self.bases = bases
            if let server = servers[environment], let base = bases[environment] {
                defaultServer = base.map { (server, $0) }
            } else {
                defaultServer = .failure(Client.noServer(for: environment))
            }
        }
    }

    /// Creates a client for one server.
    ///
    /// - Parameters:
    ///   - server: Where requests go; its ``Server/environment`` becomes the client's environment.
    ///   - transport: What sends the requests.
    ///   - configuration: Coders, adapters, decisions, limits and logging.
    public init(server: Server, transport: any Transport, configuration: Configuration = Configuration()) {
        self.init(
            servers: [server], environment: server.environment, transport: transport, configuration: configuration)
    }

    /// Creates a client for several environments.
    ///
    /// - Parameters:
    ///   - servers: One server per environment; a later server for the same environment replaces an earlier one.
    ///   - environment: The environment requests go to by default. A request to an environment with no server
    ///     fails with ``CourierError/Code/invalidURL``.
    ///   - transport: What sends the requests.
    ///   - configuration: Coders, adapters, decisions, limits and logging.
    public init(
        servers: [Server],
        environment: Server.Environment,
        transport: any Transport,
        configuration: Configuration = Configuration()
    ) {
        self.init(
            servers: servers, environment: environment, transport: transport, configuration: configuration,
            registry: RequestRegistry())
    }

    /// Creates a client that shares `registry` (the calls in flight) with the client it derives from, and `limiter`
    /// (its ``Configuration/maxConcurrentRequests`` slots) when given.
    init(
        servers: [Server],
        environment: Server.Environment,
        transport: any Transport,
        configuration: Configuration,
        registry: RequestRegistry,
        limiter: ConcurrencyLimiter? = nil
    ) {
        var byEnvironment: [Server.Environment: Server] = [:]
        for server in servers { byEnvironment[server.environment] = server }
        storage = Storage(
            servers: byEnvironment, environment: environment, transport: transport, configuration: configuration,
            registry: registry, limiter: limiter)
    }

    /// A client like this one that sends to `environment` by default. It shares this client's calls in flight and
    /// its ``Configuration/maxConcurrentRequests`` slots: the limit is one limit for both.
    public func switching(to environment: Server.Environment) -> Client {
        derived(environment: environment, configuration: configuration, limiter: storage.limiter)
    }

    /// A client like this one whose logger has `value` under `key` in its metadata, sharing this one's calls in
    /// flight and its ``Configuration/maxConcurrentRequests`` slots: for per-call metadata (the OpenAPI transport's
    /// operation ID), which must not give each call a limit of its own, as ``configured(_:)`` would.
    package func addingLogMetadata(_ key: String, _ value: String) -> Client {
        var configuration = configuration
        configuration.logger[metadataKey: key] = "\(value)"
        return derived(environment: environment, configuration: configuration, limiter: storage.limiter)
    }

    /// A client like this one whose calls go without credentials, as after a redirect to another origin
    /// (``Configuration/sendsCredentials``), sharing this one's calls in flight and
    /// ``Configuration/maxConcurrentRequests`` slots: for a linked page on another origin.
    package func withoutCredentials() -> Client {
        withoutCredentials(sendingTo: nil)
    }

    /// ``withoutCredentials()``, whose requests go to `url` exactly (when given): its scheme, authority, path and
    /// query are put back after the client's own adapters, so none of them adds a credential to the query.
    func withoutCredentials(sendingTo url: URL?) -> Client {
        var configuration = configuration
        configuration.sendsCredentials = false
        if let url { configuration.adapters.append(LinkedURLAdapter(url: url)) }
        return derived(environment: environment, configuration: configuration, limiter: storage.limiter)
    }

    /// A client on this one's servers, transport and calls in flight, with `limiter` (`nil`: a limiter of its own
    /// for `configuration`'s ``Configuration/maxConcurrentRequests``).
    private func derived(
        environment: Server.Environment, configuration: Configuration, limiter: ConcurrencyLimiter?
    ) -> Client {
        Client(
            servers: Array(servers.values), environment: environment, transport: transport,
            configuration: configuration, registry: registry, limiter: limiter)
    }

    /// A client like this one with a changed configuration.
    ///
    /// ```swift
    /// let verbose = client.configured { $0.logger = logger }
    /// ```
    public func configured(_ change: (inout Configuration) -> Void) -> Client {
        var configuration = configuration
        change(&configuration)
        return derived(environment: environment, configuration: configuration, limiter: nil)
    }

    /// How many events this client's monitors missed because their buffers were full (see ``EventMonitor``).
    public var droppedMonitorEvents: Int { configuration.dispatcher?.droppedCount ?? 0 }

    /// Sends `request` and returns its parsed response.
    ///
    /// Runs the pipeline: resolve the URL, run the adapters, validate, send, run the decisions (restarting when
    /// one asks), parse. Cancellation of the calling task is honoured at every step, and so is ``cancelAll()``.
    ///
    /// - Returns: The request's ``Request/Response``.
    /// - Throws: ``CourierError`` describing what failed and where; `CancellationError` when cancelled.
    public func send<R: Request>(_ request: R) async throws -> R.Response {
        try await send(request, tags: [])
    }

    /// Sends `request` with `tags`, so that ``cancelAll(tagged:)`` can cancel it, and returns its parsed response.
    ///
    /// The same call as ``send(_:)``; the tags only label it while it is in flight.
    ///
    /// - Parameters:
    ///   - request: What to send.
    ///   - tags: Labels for ``cancelAll(tagged:)``.
    /// - Returns: The request's ``Request/Response``.
    /// - Throws: ``CourierError`` describing what failed and where; `CancellationError` when cancelled.
    public func send<R: Request>(_ request: R, tags: Set<RequestTag>) async throws -> R.Response {
        if RequestRegistry.isExempt { return try await sendUnregistered(request) }
        return try await registry.run(tags: tags) { [self] in try await Pipeline(client: self, request: request).run() }
    }

    /// ``send(_:tags:)`` without a registry entry (a token refresh's request, see `RequestRegistry.isExempt`). Not
    /// inlined: inlined, it made the pipeline's `run` inline into the registered call's closure too, whose frame every
    /// call in flight keeps (`Benchmarks/Allocations/frames.tsv`).
    @inline(never)
    private func sendUnregistered<R: Request>(_ request: R) async throws -> R.Response {
        try await Pipeline(client: self, request: request).run()
    }

    /// Sends `request` and calls `completion` with the result; returns a handle that cancels the call.
    ///
    /// `completion` runs once, on an arbitrary thread, also after cancellation (with `CancellationError`).
    /// ``cancelAll()`` reaches the call from the moment this returns; it has no tags, so ``cancelAll(tagged:)`` does
    /// not.
    @discardableResult
    public func send<R: Request>(
        _ request: R,
        completion: @escaping @Sendable (Result<R.Response, any Error>) -> Void
    ) -> RequestTask {
        // The entry is made here, before the task starts: a `cancelAll()` right after this returns finds the call.
        let ticket = registry.enterUnlessExempt(tags: [])
        let task = Task {
            do {
                let pipeline = Pipeline(client: self, request: request)
                completion(.success(try await registry.run(ticket) { try await pipeline.run() }))
            } catch {
                completion(.failure(error))
            }
        }
        return RequestTask(task)
    }

    /// The server a request goes to (its own, else its environment's, else the client's), with its resolved base.
    func server(for request: some Request) throws -> (Server, RequestResolver.Base) {
        if let server = request.server {
            return (server, try RequestResolver.base(of: server, cleartextPolicy: configuration.cleartextPolicy))
        }
        guard let environment = request.environment, environment != self.environment else {
            return try storage.defaultServer.get()
        }
        guard let server = servers[environment], let base = bases[environment] else {
            throw Self.noServer(for: environment)
        }
        return (server, try base.get())
    }

    /// The error of a request to an environment the client has no server for.
    fileprivate static func noServer(for environment: Server.Environment) -> CourierError {
        CourierError(
            code: .invalidURL,
            stage: .resolve,
            message: "the client has no server for the environment '\(environment)'"
        )
    }
}

/// A handle on a call started with the completion-handler form of ``Client/send(_:completion:)``.
public struct RequestTask: Sendable, Hashable {
    private let task: Task<Void, Never>

    init(_ task: Task<Void, Never>) { self.task = task }

    /// Cancels the call; its completion receives `CancellationError` unless it already finished.
    public func cancel() { task.cancel() }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { task.isCancelled }

    /// Waits until the completion handler has run.
    public func wait() async { await task.value }
}
