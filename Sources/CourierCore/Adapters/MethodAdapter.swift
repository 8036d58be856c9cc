public import HTTPTypes

/// Sets the request method.
public struct MethodAdapter: SynchronousAdapter {
    /// The method to set.
    public let method: HTTPRequest.Method

    /// Creates an adapter that sets `method`.
    public init(_ method: HTTPRequest.Method) { self.method = method }

    /// `method`.
    public var name: String { "method" }

    /// Sets the method.
    package func adaptNow(_ request: inout OutgoingRequest, context: AdapterContext) throws {
        // Setting an equal method would still build a new pseudo-header field.
        if request.head.method != method { request.head.method = method }
    }
}

extension RequestAdapter where Self == MethodAdapter {
    /// Sets the request method.
    public static func method(_ method: HTTPRequest.Method) -> MethodAdapter { MethodAdapter(method) }
}
