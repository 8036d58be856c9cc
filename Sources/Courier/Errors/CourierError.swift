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
    /// A sentence for developers with the specifics (which header, which limit).
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
    public var underlyingError: (any Error)?

    /// Creates an error.
    public init(
        code: Code,
        stage: Stage,
        message: String? = nil,
        request: HTTPRequest? = nil,
        response: HTTPResponse? = nil,
        bodyExcerpt: String? = nil,
        trace: DecisionTrace = DecisionTrace(),
        underlyingError: (any Error)? = nil
    ) {
        self.code = code
        self.stage = stage
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
    public var description: String {
        var text = "CourierError.\(code) at \(stage)"
        if let request {
            text += ": \(request.method) \(Redactor.displayURL(of: request))"
        }
        if let response {
            text += " → \(response.status.code)"
        }
        if let message {
            text += ": \(message)"
        }
        if let underlyingError, !(underlyingError is CourierError) {
            text += " (underlying: \(underlyingError))"
        }
        let trace = trace.description
        if !trace.isEmpty {
            text += " [\(trace)]"
        }
        return text.oneLine
    }

    static func bodyTooLarge(limit: Int, announced: Int64?) -> CourierError {
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
