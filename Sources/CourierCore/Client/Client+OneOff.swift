public import HTTPTypes

extension Client {
    /// Sends a one-off `GET` without declaring a ``Request`` type, and decodes its body as `Value`.
    ///
    /// ```swift
    /// let user = try await client.get("/users/42", as: User.self)
    /// let page = try await client.get("/users", query: ["page": 2], as: [User].self)
    /// ```
    ///
    /// The call runs the whole pipeline like any request: the client's adapters (auth, user agent), its decisions
    /// (redirects, refresh, retry, status validation), cache and monitors. `Data` and `String` values get the raw or
    /// text body; any other `Decodable` is decoded as JSON with the client's decoder.
    ///
    /// `path` is a path only, as ``Request/path``: a `?` in it is a character, sent as `%3F` (so a value
    /// interpolated into it cannot add a query); put the query in `query`.
    ///
    /// - Throws: ``CourierError`` like ``send(_:)``.
    public func get<Value: Decodable & Sendable>(
        _ path: String,
        query: Parameters? = nil,
        headers: RequestHeaders = [:],
        as type: Value.Type = Value.self
    ) async throws -> Value {
        try await call(.get, path, query: query, headers: headers, as: type)
    }

    /// Sends a one-off `POST` with `body` (``RequestBody/json(_:encoder:)``, a form, bytes …) and decodes the
    /// response as `Value` (see ``get(_:query:headers:as:)``).
    public func post<Value: Decodable & Sendable>(
        _ path: String,
        body: RequestBody?,
        query: Parameters? = nil,
        headers: RequestHeaders = [:],
        as type: Value.Type = Value.self
    ) async throws -> Value {
        try await call(.post, path, query: query, headers: headers, body: body, as: type)
    }

    /// Sends a one-off request with any method, and decodes the response as `Value` (see ``get(_:query:headers:as:)``).
    public func call<Value: Decodable & Sendable>(
        _ method: HTTPRequest.Method,
        _ path: String,
        query: Parameters? = nil,
        headers: RequestHeaders = [:],
        body: RequestBody? = nil,
        as type: Value.Type = Value.self
    ) async throws -> Value {
        try await send(OneOffRequest<Value>(method: method, path: path, query: query, headers: headers, body: body))
    }
}

extension Client {
    /// Sends a one-off `PUT` with `body` and decodes the response as `Value` (see ``get(_:query:headers:as:)``).
    public func put<Value: Decodable & Sendable>(
        _ path: String,
        body: RequestBody?,
        query: Parameters? = nil,
        headers: RequestHeaders = [:],
        as type: Value.Type = Value.self
    ) async throws -> Value {
        try await call(.put, path, query: query, headers: headers, body: body, as: type)
    }

    /// Sends a one-off `PATCH` with `body` and decodes the response as `Value` (see ``get(_:query:headers:as:)``).
    public func patch<Value: Decodable & Sendable>(
        _ path: String,
        body: RequestBody?,
        query: Parameters? = nil,
        headers: RequestHeaders = [:],
        as type: Value.Type = Value.self
    ) async throws -> Value {
        try await call(.patch, path, query: query, headers: headers, body: body, as: type)
    }
}

/// The request ``Client/get(_:query:headers:as:)`` and its siblings send.
struct OneOffRequest<Response: Decodable & Sendable>: Request {
    let method: HTTPRequest.Method
    let path: String
    let query: Parameters?
    let headers: RequestHeaders
    let body: RequestBody?

    var parser: any ResponseParser<Response> {
        if let parser = DataParser() as? any ResponseParser<Response> { return parser }
        if let parser = StringParser() as? any ResponseParser<Response> { return parser }
        return JSONParser<Response>()
    }
}
