public import HTTPTypes

/// Sets the request method.
public struct MethodAdapter: RequestAdapter {
    /// The method to set.
    public let method: HTTPRequest.Method

    /// Creates an adapter that sets `method`.
    public init(_ method: HTTPRequest.Method) { self.method = method }

    /// `method`.
    public var name: String { "method" }

    /// Sets the method.
    public func adapt(_ request: OutgoingRequest, context: AdapterContext) async throws -> OutgoingRequest {
        // Setting an equal method would still copy the head's storage, which the caller's copy shares.
        guard request.head.method != method else { return request }
        var request = request
        request.head.method = method
        return request
    }
}

extension RequestAdapter where Self == MethodAdapter {
    /// Sets the request method.
    public static func method(_ method: HTTPRequest.Method) -> MethodAdapter { MethodAdapter(method) }
}
