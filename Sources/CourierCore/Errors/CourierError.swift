import Foundation
public import HTTPTypes

/// The one error type Courier throws: what failed, at which stage, for which request, and why.
///
/// A `CourierError` carries the request (with secrets redacted), the response when one arrived, an excerpt of
/// its body, the decision trace up to the failure, and the underlying error. A server's error body decoded by
/// ``ValidateStatusDecision`` stays typed in ``underlyingError``:
///
/// ```swift
/// do {
///     _ = try await client.send(GetProfile())
/// } catch let error as CourierError where error.code == .unacceptableStatus {
///     if let apiError = error.underlyingError as? APIError { show(apiError.reason) }
/// }
/// ```
///
/// Cancellation is not wrapped: a cancelled call throws `CancellationError`.
public struct CourierError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var code: Code
    /// The pipeline stage that failed.
    public var stage: Stage
    /// Whether the transport knows that no byte of the request left the client: the connection was never
    /// established (refused, no route to the address, a name that does not resolve; on AsyncHTTPClient also a
    /// connect timeout: URLSession's cannot tell a slow server from an unreachable one).
    ///
    /// Such a call can be sent again whatever its method, as nothing reached the server; ``RetryPolicy`` does so
    /// (``RetryPolicy/retriesUnsentRequests``). `false` means not known: the request may have reached the server.
    public var isKnownUnsent: Bool
    /// A sentence for developers with the specifics (which header, which limit).
    ///
    /// When Courier throws the error, the call's secrets are scrubbed out of it (a transport may have built it from
    /// the text of its own error, which can name the whole URL).
    public var message: String?
    /// The request as sent (or as far as it was built), with sensitive headers and query values redacted.
    public var request: HTTPRequest?
    /// The response head, when one arrived; a thrown call's error has sensitive headers (`Set-Cookie`) redacted.
    public var response: HTTPResponse?
    /// The start of the response body (at most 1 KiB, UTF-8, lossy), when there was one.
    public var bodyExcerpt: String?
    /// The adapters and decisions that ran before the failure.
    public var trace: DecisionTrace
    /// The error that caused this one: a transport error, a `DecodingError`, a decoded API error.
    ///
    /// It is kept as thrown, for programmatic access, so **its own description is not scrubbed**: a `URLError`
    /// names the whole URL, query secrets included. Print the `CourierError` instead: its ``description`` shows
    /// the underlying error with the call's secrets replaced by ``Redactor/placeholder``.
    public var underlyingError: (any Error)? {
        didSet { scrubbedUnderlyingDescription = nil }
    }
    /// The underlying error's description with the call's secrets scrubbed, set when Courier throws the error
    /// (it knows the request before redaction then).
    var scrubbedUnderlyingDescription: String?

    /// Creates an error.
    public init(
        code: Code,
        stage: Stage,
        message: String? = nil,
        request: HTTPRequest? = nil,
        response: HTTPResponse? = nil,
        bodyExcerpt: String? = nil,
        trace: DecisionTrace = DecisionTrace(),
        underlyingError: (any Error)? = nil,
        isKnownUnsent: Bool = false
    ) {
        self.code = code
        self.stage = stage
        self.isKnownUnsent = isKnownUnsent
        self.message = message
        self.request = request
        self.response = response
        self.bodyExcerpt = bodyExcerpt
        self.trace = trace
        self.underlyingError = underlyingError
    }

    /// The stages of Courier's pipeline.
    public enum Stage: String, Hashable, Sendable, CustomStringConvertible {
        /// Building the URL from the server and the path.
        case resolve
        /// Running the adapters.
        case adapt
        /// Checking headers, URL and framing before sending.
        case validate
        /// Looking up or storing a cached response.
        case cache
        /// Sending the request and receiving the response.
        case transport
        /// Running the decisions.
        case decide
        /// Turning the body into the response value.
        case parse

        /// The stage's name.
        public var description: String { rawValue }
    }

    /// One line: code, stage, request and the specifics, with secrets redacted.
    ///
    /// The request is shown redacted and the underlying error only in scrubbed form. An error Courier threw was
    /// scrubbed with the client's ``Redactor`` and the request as sent; one built by hand is scrubbed here with
    /// ``Redactor/default`` and whatever secrets its own ``request`` and ``response`` still hold.
    public var description: String {
        let redactor = Redactor.default
        let secrets = ownSecrets
        var text = "CourierError.\(code) at \(stage)"
        if let request {
            text += ": \(request.method) \(Redactor.displayURL(of: redactor.redact(request)))"
        }
        if let response {
            text += " → \(response.status.code)"
        }
        if let message {
            text += ": \(redactor.scrub(message, secrets: secrets))"
        }
        if let underlyingError, !(underlyingError is CourierError) {
            let underlying = scrubbedUnderlyingDescription ?? "\(underlyingError)"
            text += " (underlying: \(redactor.scrub(underlying, secrets: secrets)))"
        }
        let trace = trace.description
        if !trace.isEmpty {
            text += " [\(trace)]"
        }
        return text.oneLine
    }

    package static func bodyTooLarge(limit: Int, announced: Int64?) -> CourierError {
        let detail = announced.map { "the body announces \($0) bytes" } ?? "the body grew past the limit"
        return CourierError(
            code: .bodyTooLarge,
            stage: .transport,
            message: "\(detail); at most \(limit) bytes are read into memory"
        )
    }
}

extension String {
    /// The text with CR and LF shown as `\r` and `\n`, so a description or log line stays one line.
    var oneLine: String {
        guard contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) else { return self }
        return replacingOccurrences(of: "\r", with: "\\r").replacingOccurrences(of: "\n", with: "\\n")
    }
}

extension CourierError {
    /// The secrets the error's own ``request`` and ``response`` still hold, for ``Redactor/default`` to scrub.
    fileprivate var ownSecrets: Redactor.Secrets {
        let redactor = Redactor.default
        var secrets = Redactor.Secrets()
        if let request { secrets.formUnion(redactor.secrets(of: request)) }
        if let response { secrets.formUnion(redactor.secrets(ofResponse: response)) }
        return secrets
    }
}

extension CourierError: CustomReflectable {
    /// The error's fields for `dump(error)` and debuggers, with the underlying error (unless it is a ``CourierError``,
    /// which has this mirror too) as its scrubbed description: a mirror of it as thrown would show, say, a
    /// `URLError`'s failing URL with the query's secrets, which ``description`` replaces.
    public var customMirror: Mirror {
        let redactor = Redactor.default
        let secrets = ownSecrets
        var underlying: Any?
        if let underlyingError {
            underlying =
                underlyingError is CourierError
                ? underlyingError
                : redactor.scrub(scrubbedUnderlyingDescription ?? "\(underlyingError)", secrets: secrets)
        }
        return Mirror(
            self,
            children: [
                "code": code, "stage": stage, "message": message.map { redactor.scrub($0, secrets: secrets) } as Any,
                "request": request as Any, "response": response as Any, "bodyExcerpt": bodyExcerpt as Any,
                "trace": trace, "underlyingError": underlying as Any, "isKnownUnsent": isKnownUnsent,
            ],
            displayStyle: .struct)
    }
}
