import HTTPTypes

/// A request that wraps the user's request (`base`) to change a few things, such as its parser, its cache policy or
/// an adapter, and forwards every other requirement of ``Request`` to it.
///
/// A wrapper declares what it changes; everything else, ``Request/requestName`` included, answers as `base` does.
/// `PageRequestForwardingTests` fails when ``Request`` gains a requirement that is not forwarded here.
protocol ForwardingRequest: Request {
    /// The user's request type.
    associatedtype Base: Request
    /// The user's request.
    var base: Base { get }
}

extension ForwardingRequest {
    var method: HTTPRequest.Method { base.method }
    var path: String { base.path }
    var query: Parameters? { base.query }
    var headers: RequestHeaders { base.headers }
    var body: RequestBody? { base.body }
    var server: Server? { base.server }
    var environment: Server.Environment? { base.environment }
    var authentication: AuthenticationRequirement { base.authentication }
    var timeout: Duration? { base.timeout }
    var maxResponseBodySize: Int? { base.maxResponseBodySize }
    var retryPolicy: RetryPolicy? { base.retryPolicy }
    var cachePolicy: CachePolicy { base.cachePolicy }
    var adapters: [any RequestAdapter] { base.adapters }
    var decisions: [any Decision] { base.decisions }
    var requestName: String { base.requestName }
    var lane: RequestLane { base.lane }
}
