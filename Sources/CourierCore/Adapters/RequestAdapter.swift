public import Foundation
public import Logging

/// One small change to the outgoing request: its method, query, body, a header, a credential.
///
/// Adapters run in order on every attempt (a restart after a token refresh runs them again, so a new token is
/// picked up). The request's ``Request/adapters`` run first, then the client's
/// (``Client/Configuration/adapters``). An adapter may suspend (to fetch a token) and may throw; a thrown error
/// fails the call with the stage ``CourierError/Stage/adapt``.
///
/// After a redirect, the adapters run again for the redirect's target, and each one sees the request as it will be
/// sent: the redirect's URL (without a `Host` field), and, when the redirect dropped the body (a 303, a 301 or 302
/// after a `POST`), the redirect's method and no body nor content headers. Courier puts these back after each
/// adapter, so an adapter that signs the request signs what goes on the wire. A redirect that keeps the body (307,
/// 308) keeps the method the adapters build.
///
/// Built-ins are reachable by static-member lookup:
///
/// ```swift
/// var adapters: [any RequestAdapter] {
///     standardAdapters + [.header("X-Trace", traceID), .userAgent("MyApp/2.1")]
/// }
/// ```
public protocol RequestAdapter: Sendable {
    /// A short name for the decision trace and logs, such as `bearer`.
    var name: String { get }

    /// Returns `request` with this adapter's change applied.
    ///
    /// - Parameters:
    ///   - request: The request so far.
    ///   - context: The attempt, server, coders and authentication requirement of this call.
    /// - Throws: ``CourierError`` (or any error, which Courier wraps) when the request cannot be adapted.
    func adapt(_ request: OutgoingRequest, context: AdapterContext) async throws -> OutgoingRequest

    /// Applies this adapter's change to `request` in place. The pipeline calls this one.
    ///
    /// The default calls the by-value `adapt(_:context:)` and stores its result. Implement it too when the
    /// adapter writes header fields: a request passed by value shares its header storage with the pipeline's copy,
    /// so the first field written copies the whole storage (two allocations), which a change in place does not.
    /// On a throw, `request` may hold part of the change; the pipeline only records it, as the request adapted so
    /// far.
    ///
    /// - Parameters:
    ///   - request: The request so far, changed in place.
    ///   - context: The attempt, server, coders and authentication requirement of this call.
    /// - Throws: ``CourierError`` (or any error, which Courier wraps) when the request cannot be adapted.
    func adapt(_ request: inout OutgoingRequest, context: AdapterContext) async throws

    /// Not API: Courier's own adapters whose work never waits shape the request here, synchronously, and return
    /// `true`; every other adapter keeps the default, which does nothing and returns `false`, and is run with
    /// its `async` `adapt(_:context:)`. An asynchronous call through the protocol costs a call a frame from its task's
    /// allocator and two look-ups of the current task (issue #17); a dynamic cast to find out instead copied a large
    /// adapter into a new box (a `malloc`).
    func _adaptWithoutWaiting(_ request: inout OutgoingRequest, context: AdapterContext) throws -> Bool
}

extension RequestAdapter {
    /// `false`: the adapter runs with `adapt(_:context:)`.
    public func _adaptWithoutWaiting(_ request: inout OutgoingRequest, context: AdapterContext) throws -> Bool {
        false
    }

    /// Calls the by-value `adapt(_:context:)` and stores its result in `request`.
    public func adapt(_ request: inout OutgoingRequest, context: AdapterContext) async throws {
        request = try await adapt(request, context: context)
    }
}

/// A built-in adapter that changes the request in place; its by-value `adapt(_:context:)` copies
/// the request once and changes the copy.
package protocol InPlaceAdapter: RequestAdapter {}

extension InPlaceAdapter {
    /// Returns `request` with this adapter's change applied.
    public func adapt(_ request: OutgoingRequest, context: AdapterContext) async throws -> OutgoingRequest {
        var request = request
        try await adapt(&request, context: context)
        return request
    }
}

/// An adapter whose work never waits (Courier's method, query, body, headers and user-agent adapters): the pipeline
/// runs its ``adaptNow(_:context:)`` directly, without an asynchronous call through the protocol (each such call
/// costs a frame from the task's allocator and looks the current task up; issue #17). Its `async` `adapt` runs the
/// same code.
package protocol SynchronousAdapter: InPlaceAdapter {
    /// Shapes `request` in place, without waiting.
    func adaptNow(_ request: inout OutgoingRequest, context: AdapterContext) throws
}

extension SynchronousAdapter {
    /// Runs the adapter's synchronous work (`adaptNow(_:context:)`).
    public func adapt(_ request: inout OutgoingRequest, context: AdapterContext) async throws {
        try adaptNow(&request, context: context)
    }

    /// Runs the adapter's synchronous work (`adaptNow(_:context:)`); `true`.
    public func _adaptWithoutWaiting(_ request: inout OutgoingRequest, context: AdapterContext) throws -> Bool {
        try adaptNow(&request, context: context)
        return true
    }
}

/// What an adapter knows about the call it shapes.
public struct AdapterContext: Sendable {
    /// The 1-based attempt number (restarts increase it).
    public var attempt: Int
    /// The server this attempt goes to.
    public var server: Server
    /// Every server the client is configured with (for origin checks).
    public var knownServers: [Server]
    /// The request's authentication requirement.
    public var authentication: AuthenticationRequirement
    /// The client's JSON encoder.
    public var jsonEncoder: JSONEncoder
    /// The client's query-string encoder.
    public var queryEncoder: URLEncodedFormEncoder
    /// The client's form-body encoder.
    public var formEncoder: URLEncodedFormEncoder
    /// The client's logger.
    public var logger: Logger
    /// The call this attempt belongs to, as in its ``CourierEvent/callID``; `nil` when the client has no
    /// monitors. Adapters that work with a monitor (such as a tracing adapter) match events to attempts by it.
    public var callID: CourierEvent.CallID?
    /// The event stream this attempt's call is a connection of, as in its ``CourierEvent/stream``; `nil` for other
    /// calls or when the client has no monitors.
    public var stream: CourierEvent.CallID?

    /// Creates an adapter context (for tests of a single adapter).
    public init(
        attempt: Int = 1,
        server: Server,
        knownServers: [Server]? = nil,
        authentication: AuthenticationRequirement = .optional,
        jsonEncoder: JSONEncoder = JSONEncoder(),
        queryEncoder: URLEncodedFormEncoder = URLEncodedFormEncoder(),
        formEncoder: URLEncodedFormEncoder = URLEncodedFormEncoder(),
        logger: Logger = Client.Configuration.disabledLogger,
        callID: CourierEvent.CallID? = nil,
        stream: CourierEvent.CallID? = nil
    ) {
        self.attempt = attempt
        self.server = server
        self.knownServers = knownServers ?? [server]
        self.authentication = authentication
        self.jsonEncoder = jsonEncoder
        self.queryEncoder = queryEncoder
        self.formEncoder = formEncoder
        self.logger = logger
        self.callID = callID
        self.stream = stream
    }
}

/// An adapter made from a closure, for one-off changes.
///
/// ```swift
/// .custom("signature") { request, _ in
///     var request = request
///     request.head.headerFields[.init("X-Signature")!] = sign(request)
///     return request
/// }
/// ```
public struct ClosureAdapter: RequestAdapter {
    /// The name shown in traces.
    public let name: String
    private let body: @Sendable (OutgoingRequest, AdapterContext) async throws -> OutgoingRequest

    /// Creates an adapter from a closure.
    public init(
        name: String,
        _ body: @escaping @Sendable (OutgoingRequest, AdapterContext) async throws -> OutgoingRequest
    ) {
        self.name = name
        self.body = body
    }

    /// Runs the closure.
    public func adapt(_ request: OutgoingRequest, context: AdapterContext) async throws -> OutgoingRequest {
        try await body(request, context)
    }
}

extension RequestAdapter where Self == ClosureAdapter {
    /// An adapter made from a closure.
    public static func custom(
        _ name: String,
        _ body: @escaping @Sendable (OutgoingRequest, AdapterContext) async throws -> OutgoingRequest
    ) -> ClosureAdapter {
        ClosureAdapter(name: name, body)
    }
}
