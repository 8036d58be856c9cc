import Foundation
import HTTPTypes

/// What the pipeline knows about a call so far, for errors and the log line.
struct CallRecord: Sendable {
    init(events: CallEvents? = nil) { self.events = events }

    var stage: CourierError.Stage = .resolve
    var attempt = 0
    var request: HTTPRequest?
    /// After a redirect, where it sends the call: put back on the request after each adapter of every later attempt
    /// (`Pipeline.follow(_:to:state:)`).
    var redirect: RequestResolver.RedirectTarget?
    /// Whether a redirect of this call dropped the body: one that said so (a 303, a 301 or 302 after a `POST`), or
    /// one whose method is not the one the request was sent with. The body stays dropped for the rest of the chain: a
    /// 307 or 308 after it keeps the `GET` it was sent, not the body the adapters build again.
    var bodyDropped = false
    var response: HTTPResponse?
    /// The protocol the last response came over (`h2`, `http/1.1`), when the transport reported it.
    var negotiatedProtocol: String?
    var body: Data?
    var bodySize: Int?
    var trace = DecisionTrace()
    /// The requests of earlier attempts (before redaction), whose secrets are scrubbed from the error too: a
    /// redirect or a refresh changes the query or the credentials between attempts.
    private(set) var earlierRequests: [HTTPRequest] = []
    /// The secrets of a ``CredentialBody`` request's body, set when the call fails.
    var bodySecrets: [String] = []
    /// Whether the call waits for a slot of the client's `maxConcurrentRequests`.
    var isQueued = false
    /// The call's events for monitors, or `nil` when the client has none.
    var events: CallEvents?
    /// Whether a live body ended (its lease counts its bytes in ``bodySize`` as they arrive).
    var streamFinished = false

    mutating func begin(attempt: Int) {
        if let request, earlierRequests.last != request, earlierRequests.count < Self.maxEarlierRequests {
            earlierRequests.append(request)
        }
        self.attempt = attempt
    }

    /// The attempt's request goes to the transport: the previous attempt's response is no longer the call's. Kept
    /// until now, so that a failure before it (a redirect target that does not resolve, an adapter, a deadline while
    /// queued for a slot) carries the response that led to the attempt.
    mutating func sending() {
        stage = .transport
        response = nil
        negotiatedProtocol = nil
        body = nil
        bodySize = nil
    }

    /// Records a step in the trace and tells the monitors (decisions and the parse; not each adapter).
    mutating func record(
        _ kind: DecisionTrace.Step.Kind, _ name: String, _ outcome: DecisionTrace.Step.Outcome, attempt: Int
    ) {
        trace.record(kind, name, outcome, attempt: attempt)
        guard kind != .adapter else { return }  // the adapted event covers the adapters
        events?.emit(
            .decision(DecisionTrace.Step(kind: kind, name: name, outcome: outcome, attempt: attempt)), attempt: attempt)
    }

    /// Tells the monitors the call returned a value.
    func emitFinished() {
        guard let events else { return }
        events.emit(
            .finished(status: response?.status ?? .ok, duration: Moment.now - events.start, bytes: bodySize),
            attempt: attempt
        )
    }

    /// Tells the monitors the call threw `error` (already finalized).
    func emitFailed(_ error: any Error) {
        guard let events else { return }
        events.emit(
            .failed(error: error, status: response?.status, duration: Moment.now - events.start),
            attempt: attempt
        )
    }

    /// At most this many earlier requests are kept for scrubbing (a call's restarts are bounded anyway).
    private static let maxEarlierRequests = 32

    /// `error` as a ``CourierError`` filled with the call's request, response, body excerpt and trace, with every
    /// secret the call carried redacted or scrubbed out of its text.
    ///
    /// The request and response are redacted with `redactor`. The message, the body excerpt and the underlying
    /// error's description (kept in ``CourierError/scrubbedUnderlyingDescription``) are scrubbed of the secret
    /// values of the requests as sent, the response (`Set-Cookie`, a redirect's `Location`) and its JSON or form
    /// body.
    func finalize(_ error: any Error, redactor: Redactor) -> any Error {
        if error is CancellationError { return error }
        var courierError: CourierError
        if let existing = error as? CourierError {
            courierError = existing
        } else {
            courierError = CourierError(
                code: Self.code(for: stage),
                stage: stage,
                message: "\(error)",
                underlyingError: error
            )
        }
        let secrets = secrets(of: courierError, redactor: redactor)
        courierError.request = (courierError.request ?? request).map { redactor.redact($0) }
        if var head = courierError.response ?? response {
            head.headerFields = redactor.redact(head.headerFields)
            courierError.response = head
        }
        if courierError.bodyExcerpt == nil, let body, !body.isEmpty {
            courierError.bodyExcerpt = redactor.excerpt(of: body, contentType: response?.headerFields[.contentType])
        }
        courierError.message = courierError.message.map { redactor.scrub($0, secrets: secrets) }
        courierError.bodyExcerpt = courierError.bodyExcerpt.map { excerpt in
            let scrubbed = redactor.scrub(excerpt, secrets: secrets)
            // Cut short (the excerpt's 1 KiB of a longer body): a secret may have been cut in two.
            let isCut = scrubbed.hasSuffix("…") || (body?.count ?? 0) > excerpt.utf8.count
            return isCut ? secrets.scrubTail(scrubbed) : scrubbed
        }
        if let underlying = courierError.underlyingError, !(underlying is CourierError) {
            courierError.scrubbedUnderlyingDescription = redactor.scrub("\(underlying)", secrets: secrets)
        }
        if courierError.trace.isEmpty { courierError.trace = trace }
        return courierError
    }

    /// The secret values of this call and of `error`'s own request and response, before redaction.
    private func secrets(of error: CourierError, redactor: Redactor) -> Redactor.Secrets {
        var secrets = Redactor.Secrets()
        for request in earlierRequests + [request, error.request].compactMap({ $0 }) {
            secrets.formUnion(redactor.secrets(of: request))
        }
        for response in [response, error.response].compactMap({ $0 }) {
            secrets.formUnion(redactor.secrets(ofResponse: response))
        }
        if let body {
            secrets.formUnion(redactor.secrets(inBody: body, contentType: response?.headerFields[.contentType]))
        }
        for secret in bodySecrets { secrets.insert(secret) }
        return secrets
    }

    private static func code(for stage: CourierError.Stage) -> CourierError.Code {
        switch stage {
        case .resolve: .invalidURL
        case .adapt: .adapterFailed
        case .validate: .invalidHeader
        case .cache, .transport: .transportFailed
        case .decide: .decisionFailed
        case .parse: .decodingFailed
        }
    }
}
