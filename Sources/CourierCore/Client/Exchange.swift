public import HTTPTypes

/// A call's value together with what happened on the wire: the final status and header fields (an `ETag`, rate-limit
/// headers, a total count), the decision trace, the number of attempts, the duration and the negotiated protocol.
///
/// ```swift
/// let users = try await client.exchange(for: ListUsers())
/// let remaining = users.headerFields[HTTPField.Name("X-RateLimit-Remaining")!]
/// print(users.status, users.attempts, users.duration, users.trace)  // 200 OK 1 38 ms [validateStatus ✓ → parse ✓]
/// ```
///
/// Returned by ``Client/exchange(for:tags:)``; ``Client/send(_:)`` returns only the value. Connection timings (DNS,
/// connect, TLS, first byte) are not reported: neither AsyncHTTPClient nor URLSession on Linux exposes them per
/// request.
public struct Exchange<Value: Sendable>: Sendable {
    /// The parsed value, as ``Client/send(_:)`` returns it.
    public var value: Value
    /// The last attempt's request head, secrets redacted by the client's ``Redactor``.
    public var request: HTTPRequest?
    /// The final response head (after redirects, restarts and retries); `nil` only for a value that needed no response.
    public var response: HTTPResponse?
    /// Every decision taken, across attempts.
    public var trace: DecisionTrace
    /// How many attempts the call took (restarts, redirects and retries each count one).
    public var attempts: Int
    /// From the call's start to its parsed value.
    public var duration: Duration
    /// The protocol of the final response (`h2`, `http/1.1`), when the transport reports it.
    public var negotiatedProtocol: String?
    /// The size of the final response's body in bytes, when it was read into memory.
    public var bodySize: Int?

    /// The final status (`.ok` …); `nil` only when there was no response.
    public var status: HTTPResponse.Status? { response?.status }
    /// The final response's header fields (empty without a response).
    public var headerFields: HTTPFields { response?.headerFields ?? [:] }
}

extension Client {
    /// Sends `request` like ``send(_:)`` and returns its value with the status, header fields, decision trace,
    /// attempts, duration and protocol of the call (see ``Exchange``).
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - tags: Labels for ``cancelAll(tagged:)``, as for ``send(_:tags:)``.
    /// - Throws: What ``send(_:)`` throws.
    public func exchange<R: Request>(for request: R, tags: Set<RequestTag> = []) async throws -> Exchange<R.Response> {
        try await registry.runUnlessExempt(tags: tags) { [self] in
            try await Pipeline(client: self, request: request).exchange()
        }
    }
}
