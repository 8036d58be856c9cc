public import Foundation
public import HTTPTypes

/// A typed description of one API call: where it goes, what it sends, and what it returns.
///
/// Every requirement but ``path`` has a default, so a typical request states only what differs:
///
/// ```swift
/// struct GetUser: Request {
///     typealias Response = User
///     let id: Int
///     var path: String { "/users/\(pathSegment: id)" }
/// }
/// let user = try await client.send(GetUser(id: 42))
/// ```
///
/// A request shapes its outgoing message with ``adapters`` (by default: method, query, body, headers, built
/// from the properties below) and handles the response with ``decisions`` (by default: validate the status).
/// The client runs its own adapters (authentication, user agent) after the request's and its own decisions
/// (redirects, retries, token refresh) before the request's. A custom request replaces ``adapters`` and
/// ``decisions`` wholesale. Parsing with ``parser`` is always the last step.
public protocol Request: Sendable {
    /// What a successful call returns.
    associatedtype Response: Sendable

    /// The HTTP method. Default: `GET`.
    var method: HTTPRequest.Method { get }

    /// The path appended to the server's base URL, for example `/users/42`.
    ///
    /// Characters that cannot appear in a path (space, `?`, `#`, control characters, non-ASCII) are
    /// percent-encoded exactly once; a valid `%XX` triplet is kept as written. Interpolate values that must stay
    /// one segment with `\(pathSegment: value)`, so `a/b` becomes `a%2Fb` (and a value of `.`, `..`, one with a
    /// `..` part such as `../admin`, or nothing at all fails the call with ``CourierError/Code/invalidURL``). The
    /// query goes in ``query``, never in the path.
    var path: String { get }

    /// Query parameters, encoded with the client's query encoder. Default: none.
    var query: Parameters? { get }

    /// Header fields, validated before sending. Default: none.
    var headers: RequestHeaders { get }

    /// The body. Default: none.
    var body: RequestBody? { get }

    /// A server for this request only (an upload host, say), overriding the client's. Default: `nil`.
    var server: Server? { get }

    /// One of the client's environments for this request only. Default: `nil` (the client's current one).
    var environment: Server.Environment? { get }

    /// Whether the client's credential is attached. Default: ``AuthenticationRequirement/optional``.
    var authentication: AuthenticationRequirement { get }

    /// A deadline for the whole call, restarts included. Default: `nil` (the client's).
    var timeout: Duration? { get }

    /// The largest response body read into memory for decisions and parsing. Default: `nil` (the client's).
    var maxResponseBodySize: Int? { get }

    /// When this request is retried. Default: `nil` (the client's ``Client/Configuration/retryPolicy``).
    var retryPolicy: RetryPolicy? { get }

    /// How this request uses the client's ``Client/Configuration/cache``. Default:
    /// ``CachePolicy/useProtocolRules`` (RFC 9111).
    var cachePolicy: CachePolicy { get }

    /// The lane this request travels in: ``RequestLane/priority`` skips the client's
    /// ``Client/Configuration/maxConcurrentRequests`` queue and, on transports with pools, the pool the other calls
    /// queue for. Default: ``RequestLane/standard``. Courier's OAuth 2.0 token requests are ``RequestLane/priority``.
    var lane: RequestLane { get }

    /// The adapters that shape the outgoing request, in order. Default: ``standardAdapters``.
    var adapters: [any RequestAdapter] { get }

    /// The decisions that handle the response, in order. Default: `[.validateStatus()]`.
    var decisions: [any Decision] { get }

    /// Turns the final response into ``Response``. Defaults exist for `Decodable` (JSON), `Data`, `String` and
    /// `Void`.
    var parser: any ResponseParser<Response> { get }

    /// The name monitors report for this request: ``CourierEvent/requestName``, which names a tracing span and,
    /// when enabled, a metrics dimension. Default: the Swift type's name, such as `GetUser`.
    ///
    /// Keep the set of names small and fixed (one per kind of request, like an OpenAPI operation ID): never a URL,
    /// an ID or anything else that varies per call.
    var requestName: String { get }
}

extension Request {
    /// `GET`.
    public var method: HTTPRequest.Method { .get }
    /// No query.
    public var query: Parameters? { nil }
    /// No header fields.
    public var headers: RequestHeaders { [:] }
    /// No body.
    public var body: RequestBody? { nil }
    /// The client's server.
    public var server: Server? { nil }
    /// The client's environment.
    public var environment: Server.Environment? { nil }
    /// Attach a credential when there is one.
    public var authentication: AuthenticationRequirement { .optional }
    /// The client's deadline.
    public var timeout: Duration? { nil }
    /// The client's limit.
    public var maxResponseBodySize: Int? { nil }
    /// The client's retry policy.
    public var retryPolicy: RetryPolicy? { nil }
    /// ``CachePolicy/useProtocolRules``.
    public var cachePolicy: CachePolicy { .useProtocolRules }
    /// ``standardAdapters``.
    public var adapters: [any RequestAdapter] { standardAdapters }
    /// The Swift type's name.
    public var requestName: String { String(describing: Self.self) }
    /// ``RequestLane/standard``.
    public var lane: RequestLane { .standard }
    /// Validate the status: a non-2xx response fails with ``CourierError/Code/unacceptableStatus``.
    public var decisions: [any Decision] { defaultRequestDecisions }

    /// The adapters built from this request's properties: method, query, body, headers.
    public var standardAdapters: [any RequestAdapter] {
        let method = method
        let query = query
        let body = body
        let headers = headers
        // The most common request, a plain GET, gets an array built once instead of one per call.
        if method == .get, query == nil, body == nil, headers.isEmpty { return plainGetAdapters }
        var adapters: [any RequestAdapter] = []
        adapters.reserveCapacity(4)
        adapters.append(MethodAdapter(method))
        if let query { adapters.append(QueryAdapter(query)) }
        if let body { adapters.append(BodyEncodingAdapter(body)) }
        if !headers.isEmpty { adapters.append(HeadersAdapter(headers)) }
        return adapters
    }
}

/// ``Request/standardAdapters`` of a GET without query, body or headers, built once.
let plainGetAdapters: [any RequestAdapter] = [MethodAdapter(.get)]

/// ``Request/decisions``' default, built once: an array literal in the getter would allocate on every call. It must
/// hold no `RetryDecision` (`Pipeline.decisionChain(for:client:)` skips the search for one in it).
let defaultRequestDecisions: [any Decision] = [ValidateStatusDecision()]

extension Request where Response: Decodable {
    /// Decodes the body as JSON with the client's decoder.
    public var parser: any ResponseParser<Response> { JSONParser<Response>() }
}

extension Request where Response == Data {
    /// Returns the body's bytes.
    public var parser: any ResponseParser<Response> { DataParser() }
}

extension Request where Response == String {
    /// Decodes the body as text in the charset of its `Content-Type` (UTF-8 by default).
    public var parser: any ResponseParser<Response> { StringParser() }
}

extension Request where Response == Void {
    /// Ignores the body.
    public var parser: any ResponseParser<Response> { EmptyParser() }
}
