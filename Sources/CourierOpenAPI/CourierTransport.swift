#if OpenAPI
    public import CourierCore
    public import Foundation
    public import HTTPTypes
    import Logging
    public import OpenAPIRuntime

    /// A swift-openapi-runtime `ClientTransport` that sends every generated operation through a Courier `Client`.
    ///
    /// Each operation is one Courier call: the client's server for its environment, its adapters (authentication,
    /// user agent, trace context), its decisions (redirects, token refresh, retries), its cache, monitors and log
    /// line. The operation ID is the call's `Request.requestName`, so it names the call's events, its tracing span
    /// and (with `MetricsMonitor(includesRequestName: true)`) its metrics, and the call's log line carries it as
    /// `openapi.operation_id` metadata.
    ///
    /// ```swift
    /// let courier = Courier.Client(baseURL: URL(string: "https://api.example.com/v1")!)
    /// let api = Client(serverURL: try Servers.Server1.url(), transport: CourierTransport(client: courier))
    /// let greeting = try await api.getGreeting(query: .init(name: "Ada")).ok.body.json
    /// ```
    ///
    /// (In a module with generated code, `Client` is the generated client; Courier's is `Courier.Client`.)
    ///
    /// - **Statuses.** No status is turned into an error unless you add ``Configuration/decisions`` that do (such
    ///   as `ValidateStatusDecision()`): generated code expects undocumented statuses to reach it, as
    ///   `.undocumented(statusCode:_:)`. The client's own decisions still run first: a `503` is retried and a `401`
    ///   refreshed before the generated code sees the last response. A redirect to another scheme than http(s)
    ///   (an app's callback, `myapp://cb?code=…`) is not followed and reaches the generated code as its 3xx, as
    ///   the server sent it (typed Courier requests fail with `invalidRedirect` there).
    /// - **Bodies.** A request body streams to the server as the generated code produced it (its length, when
    ///   known, becomes `Content-Length`; a replayable one of at most 1 MiB goes in one piece); a body that can be
    ///   iterated only once is never re-sent, so a retry or a 307 redirect of it is not made and that response
    ///   reaches the generated code. A response body streams with backpressure as the generated code reads it,
    ///   unless the operation is in ``Configuration/bufferedOperationIDs``; a JSON, XML or form body, which the
    ///   generated code decodes whole, is limited to the client's `maxResponseBodySize`.
    /// - **Errors.** A Courier failure is thrown as the redacted `CourierError`, which the runtime wraps in a
    ///   `ClientError` whose `underlyingError` it is. An error while reading a streamed response body is thrown by
    ///   the body's iterator, also as a `CourierError`.
    /// - **Cancellation.** Cancelling the task that calls the operation cancels the call; cancelling the task that
    ///   reads a streamed body fails the next read and closes the connection.
    /// - **Middlewares.** A `ClientMiddleware` of the generated client runs once per operation, outside this
    ///   transport: it sees the request before any Courier adapter and the final response after every Courier
    ///   decision (after retries, refreshes and redirects).
    public struct CourierTransport: ClientTransport {
        /// The Courier client every operation is sent through.
        public let client: Client
        /// How operations map onto Courier calls.
        public let configuration: Configuration

        /// Creates a transport over `client`.
        ///
        /// - Parameters:
        ///   - client: The Courier client: its server, transport, adapters, decisions, cache and monitors.
        ///   - configuration: How operations map onto Courier calls. The default sends to the client's server,
        ///     judges no status and streams every response body (a JSON, XML or form one within the client's
        ///     `maxResponseBodySize`).
        public init(client: Client, configuration: Configuration = Configuration()) {
            self.client = client
            self.configuration = configuration
        }

        /// Sends one generated operation through the Courier client and returns its final response.
        ///
        /// Called by the generated client after its middlewares; runs the whole Courier pipeline, restarts
        /// included, and returns once the decisions accepted a response head.
        ///
        /// - Parameters:
        ///   - request: The generated request: method, path with its query, header fields.
        ///   - body: The generated request body, if any.
        ///   - baseURL: The generated client's server URL; used only with
        ///     ``Configuration/usesGeneratedServerURL``.
        ///   - operationID: The operation's ID in the OpenAPI document.
        /// - Returns: The response head and its body (none for `HEAD`).
        /// - Throws: `CourierError` when the call fails; `CancellationError` when the task is cancelled.
        public func send(
            _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
        ) async throws -> (HTTPResponse, HTTPBody?) {
            // The operation is built in the function that sends it: a call waiting for its answer keeps one copy of
            // it, in that function's frame (issue #17: 3 KB of frames here before, measured with
            // `Benchmarks/async-frames`).
            // `isEmpty` first: a lookup in the empty set still hashes the operation ID.
            if !configuration.bufferedOperationIDs.isEmpty, configuration.bufferedOperationIDs.contains(operationID) {
                let buffered = try await send(
                    request, body: body, baseURL: baseURL, operationID: operationID, parser: BufferedResponseParser())
                return (buffered.head, request.method == .head ? nil : HTTPBody(buffered.body))
            }
            let live = try await send(
                request, body: body, baseURL: baseURL, operationID: operationID, parser: LiveResponseParser())
            return (
                live.head,
                try await Self.body(
                    of: live, method: request.method, accept: request.headerFields[.accept],
                    decodedLimit: client.configuration.maxResponseBodySize)
            )
        }

        /// Sends the generated request through the Courier client, its response parsed by `parser`.
        @inline(never)
        private func send<Parser: ResponseParser>(
            _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String, parser: Parser
        ) async throws -> Parser.Output {
            let body = try await Self.messageBody(for: body)
            return try await clientLogging(operationID).send(
                operation(request, body: body, baseURL: baseURL, operationID: operationID).parsed(by: parser))
        }

        /// The largest request body sent in one piece.
        static let inMemoryBodyLimit = 1024 * 1024

        /// The generated `body` as Courier sends it: in memory when it can be iterated again and has a known length
        /// of at most ``inMemoryBodyLimit`` bytes (what generated code makes of an encoded JSON, XML or form value),
        /// else streaming its chunks. The URLSession transport streams a body of unknown provenance through a pipe
        /// on Linux (without `Content-Length`) and through a file on Apple platforms: a server that requires a
        /// length (411), or a password written to disk, for every generated POST.
        static func messageBody(for body: HTTPBody?) async throws -> MessageBody? {
            guard let body else { return nil }
            guard body.iterationBehavior == .multiple, case .known(let count) = body.length,
                count <= inMemoryBodyLimit
            else { return MessageBody(streaming: body) }
            return MessageBody(try await ArraySlice(collecting: body, upTo: Int(count)))
        }

        /// The generated request as a Courier request, with the transport's decisions and timeout.
        private func operation(
            _ request: HTTPRequest, body: MessageBody?, baseURL: URL, operationID: String
        ) throws -> Operation {
            try Operation(
                generated: request,
                body: body,
                operationID: operationID,
                server: configuration.usesGeneratedServerURL ? server(for: baseURL) : nil,
                decisions: configuration.decisions,
                timeout: configuration.timeout
            )
        }

        /// The response body the generated code reads: `live`'s chunks as they arrive; none for `HEAD`, and an empty
        /// one (already read to its end) for a response that has no body.
        ///
        /// A body the generated code decodes whole (JSON, XML, a form: swift-openapi-runtime collects it with no
        /// limit of its own) is limited to `decodedLimit` bytes, the client's
        /// `Client.Configuration.maxResponseBodySize`: past it, reading fails with `CourierError.Code.bodyTooLarge`
        /// (at once when the server declares a larger length), as a buffered call would. Other bodies (a download,
        /// an event stream, plain bytes) stream unlimited: the generated code hands them to you. A response without a
        /// `Content-Type`, or with a wildcard, is judged by the request's `accept` (`application/json` for a JSON
        /// operation): swift-openapi-runtime then decodes it as the first type the operation accepts.
        static func body(
            of live: LiveResponse, method: HTTPRequest.Method, accept: String? = nil, decodedLimit: Int
        ) async throws -> HTTPBody? {
            let code = live.status.code
            if method == .head || code == 204 || code == 304 || live.length == .known(0) {
                // Read the empty body to its end, so the call ends now and the connection goes back to the pool.
                for try await _ in live {}
                return method == .head ? nil : HTTPBody()
            }
            let length: HTTPBody.Length = live.length.knownCount.map { .known($0) } ?? .unknown
            let declared = live.headerFields[.contentType]
            let decodedWhole =
                isDecodedWhole(declared)
                || (isUnspecified(declared)
                    && (accept?.split(separator: ",").contains { isDecodedWhole(String($0)) } ?? false))
            guard decodedWhole else {
                return HTTPBody(live, length: length, iterationBehavior: .single)
            }
            if let announced = live.length.knownCount, announced > decodedLimit {
                // Not read: the call ends with the error, and the connection closes.
                throw live.end(with: CourierError.bodyTooLarge(limit: decodedLimit, announced: announced))
            }
            return HTTPBody(live.limited(to: decodedLimit), length: length, iterationBehavior: .single)
        }

        /// Whether the generated code decodes a body of `contentType` whole: JSON, XML or a URL-encoded form
        /// (`application/json`, `application/problem+json`, `text/xml`, `application/x-www-form-urlencoded`, …).
        static func isDecodedWhole(_ contentType: String?) -> Bool {
            guard let contentType else { return false }
            let type = contentType.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces).lowercased()
            return type == "application/json" || type.hasSuffix("+json") || type == "application/xml"
                || type == "text/xml" || type.hasSuffix("+xml") || type == "application/x-www-form-urlencoded"
        }

        /// Whether `contentType` says nothing of the body's type: absent, empty or a wildcard (`*/*`).
        static func isUnspecified(_ contentType: String?) -> Bool {
            guard let contentType else { return true }
            let type = contentType.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces)
            return type.isEmpty || type == "*/*"
        }

        /// The client's server whose base URL is `baseURL` (the same origin and path), or a server for `baseURL`
        /// in the client's environment. Among several, the current environment's, else the first by name.
        func server(for baseURL: URL) -> Server {
            let wanted = BaseKey(baseURL)
            let matching = client.servers.filter { BaseKey($0.value.baseURL) == wanted }
            if let current = matching[client.environment] { return current }
            if let known = matching.min(by: { "\($0.key)" < "\($1.key)" })?.value { return known }
            return Server(baseURL: baseURL, environment: client.environment)
        }

        /// A base URL as servers are told apart: its origin (scheme and host case-insensitive, the default port
        /// filled in) and its path as written, without trailing slashes (paths are case-sensitive: `/API` is not
        /// `/api`).
        private struct BaseKey: Equatable {
            let origin: Origin?
            let path: String

            init(_ url: URL) {
                origin = Origin(url: url)
                var path = URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedPath ?? url.path
                while path.hasSuffix("/") { path.removeLast() }
                self.path = path
            }
        }

        /// The client, with the operation ID in its logger's metadata when the call's log line will be written.
        private func clientLogging(_ operationID: String) -> Client {
            // Not through `client.configuration`: from this module that is a copy of the whole configuration, 0.5 µs
            // of every call at 1 in flight (`Benchmarks/profile-diff --clients openapi-ahc,openapi-courier`).
            guard client.logsCalls else { return client }
            // Not `configured`: that client would have a `maxConcurrentRequests` limiter of its own for each call.
            return client.addingLogMetadata("openapi.operation_id", operationID)
        }
    }
#endif
