/// A request that wraps the user's request to change one thing (its parser, its cache policy, an adapter) and
/// forwards the rest: what the call reports as its request name is the wrapped request's, not the wrapper's.
protocol WrappingRequest: Request {
    /// The user's request type.
    associatedtype Wrapped: Request
}

/// A call that is one connection of an event stream (``EventSource``).
protocol StreamConnection {
    /// The stream's ID, shared by its connections (see ``CourierEvent/stream``).
    var stream: CourierEvent.CallID? { get }
}

/// The name a call of `request` reports in its events, metrics and spans: its type's name, or for a wrapper the
/// name of the request it wraps (`GetUser`, never `PageRequest<GetUser>`).
func requestName<R: Request>(of request: R) -> String {
    if let wrapper = request as? any WrappingRequest { return wrappedName(of: wrapper) }
    return String(describing: R.self)
}

private func wrappedName<W: WrappingRequest>(of wrapper: W) -> String {
    String(describing: W.Wrapped.self)
}
