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

/// A call's ``CallRecord``, locked only when more than the call's own task can reach it.
///
/// A call without a deadline and without a live body is one task: every step that reads or writes its record runs in
/// turn, in the task that runs the call, so the accesses are ordered without a lock (issue #17: about twenty lock and
/// unlock pairs per call). A deadline runs the attempts in a task of their own while the caller may read the record
/// (``Pipeline``'s `withDeadline`), and a live body's lease updates it from whichever task reads or drops the body:
/// those records are `isShared`, and every access takes the lock.
struct CallState: @unchecked Sendable {
    // `@unchecked Sendable` is sound: the only stored property is the storage reference, and the record is only read
    // or written inside `withLock`, which holds the lock for a shared record. An unshared one is made for a call
    // whose accesses all happen in one task (`Pipeline.begin()` decides, from the call's deadline and response type,
    // before anything else can reach it), which the task's own ordering keeps exclusive. No reference to the record
    // escapes the closure.
    private let storage: Storage

    /// A state for `record`, with a lock when `isShared`. One allocation either way.
    static func make(_ record: CallRecord, isShared: Bool) -> CallState {
        CallState(storage: Storage.make(record, isShared: isShared))
    }

    /// Runs `body` with exclusive access to the record.
    func withLock<Result>(_ body: (inout CallRecord) throws -> Result) rethrows -> Result {
        try storage.withLock(body)
    }

    struct Header {
        var record: CallRecord
        let isShared: Bool
    }

    /// The record (the header) and, for a shared one, the platform's lock (the single element), in one allocation.
    final class Storage: ManagedBuffer<Header, PlatformLock.Primitive> {
        static func make(_ record: CallRecord, isShared: Bool) -> Storage {
            let buffer = create(minimumCapacity: 1) { _ in Header(record: record, isShared: isShared) }
            let storage = unsafeDowncast(buffer, to: Storage.self)
            if isShared {
                storage.withUnsafeMutablePointerToElements { PlatformLock.initialize($0) }
            }
            return storage
        }

        func withLock<Result>(_ body: (inout CallRecord) throws -> Result) rethrows -> Result {
            try withUnsafeMutablePointers { header, lock in
                guard header.pointee.isShared else { return try body(&header.pointee.record) }
                PlatformLock.lock(lock)
                defer { PlatformLock.unlock(lock) }
                return try body(&header.pointee.record)
            }
        }

        deinit {
            // The header (the record) is a stored property, destroyed with the object; the lock is an element.
            withUnsafeMutablePointers { header, lock in
                if header.pointee.isShared { PlatformLock.destroy(lock) }
            }
        }
    }
}
