import CourierCore
import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One request in flight: the bridge between URLSession's delegate callbacks and the caller's async code.
///
/// It hands the response head to ``URLSessionTransport/send(_:context:)`` and buffers body chunks for
/// ``ResponseBodySequence`` until they are read, with a high-water mark that holds the transfer back (see
/// ``DeliveryQueue``). When the transfer cannot be held back (on Linux, after the delivery queue's stall budget),
/// more than `maxUnreadBytes` unread bytes fail the body with `CourierError.Code.unsupported`. Every way the request can end (success, a URLSession error, a limit, a timer, cancellation,
/// the body dropped unread) goes through ``fail(_:)`` or ``didComplete(error:)``, which settle the state exactly
/// once. A failure reaches the caller at once: it never waits for URLSession to acknowledge the cancellation.
final class ResponseTask: Sendable {
    struct Limits: Sendable {
        var maxDecompressedBytes: Int64
        var maxDecompressionRatio: Int64
        var highWaterMark: Int
        var maxUnreadBytes: Int
        var connectTimeout: Duration
        var idleTimeout: Duration?
    }

    /// Where the URLSession task is between the transport and FoundationNetworking's redirect handling.
    private enum Redirect {
        /// No redirect was answered and no cancellation was asked for.
        case none
        /// The 3xx was answered ("do not follow"): the task completes by itself and must not be cancelled.
        case answered
        /// The task was asked to cancel: a redirect must not be answered any more.
        case cancelRequested
    }

    private struct State {
        var task: URLSessionTask?
        var headWaiter: CheckedContinuation<HTTPResponse, any Error>?
        var head: HTTPResponse?
        var expectedLength: Int64?
        var decodedLimit: Int64?
        var received: Int64 = 0
        var chunks: [ArraySlice<UInt8>] = []
        var buffered = 0
        var bodyWaiter: CheckedContinuation<ArraySlice<UInt8>?, any Error>?
        var failure: (any Error)?
        var isComplete = false
        /// The head came from a declined authentication challenge: the task's cancellation ends the body.
        var endsAtCancellation = false
        var isPaused = false
        var redirect = Redirect.none
        var lastProgress = ContinuousClock.now
        var startedAt = ContinuousClock.now
        /// Whether the connection is known to be up (a head, body bytes sent, or a successful probe).
        var isConnected = false
        /// Whether a connect probe was started: the connect timeout then waits for its answer.
        var isProbing = false
        /// The upload progress reported so far (never more than the body's length, never going back).
        var reportedSent: Int64 = 0
    }

    private let state = LockedBox(State())
    /// Whether the transfer is held back as last applied (`pauseDelivery()`/`resumeDelivery()`), which
    /// ``syncDelivery()`` brings to `state.isPaused` under this lock.
    private let appliedPause = LockedBox(false)
    private let limits: Limits
    private let lane: SessionLane
    private let watchdog: Watchdog
    /// The call's deadline, if it has one.
    private let deadline: ContinuousClock.Instant?
    private let method: HTTPRequest.Method
    /// The request's URL, whose origin ``ConnectProbe`` tries when the connect timeout passes.
    private let url: URL?
    private let cancelUpload: (@Sendable () -> Void)?
    /// Where the bytes URLSession reports sent go: a body sent from memory or a file, which the pipeline's progress
    /// observer does not see (`MessageBody.progressReport`).
    private let uploadProgress: (@Sendable (Int64) -> Void)?
    /// The length of the body whose progress ``uploadProgress`` reports, when known.
    private let uploadLength: Int64?
    /// Whether URLSession may send the request again by itself, on a new connection after a reused one died
    /// (libcurl does for any request on a reused connection, CFNetwork for idempotent ones): then a failure to
    /// connect does not prove that nothing was sent (`CourierError.isKnownUnsent`).
    private let mayBeResent: Bool
    #if canImport(FoundationNetworking)
        /// This request's generation on the lane's ``DeliveryQueue``.
        private let delivery: Int
    #endif

    init(
        method: HTTPRequest.Method,
        url: URL?,
        limits: Limits,
        deadline: ContinuousClock.Instant?,
        lane: SessionLane,
        watchdog: Watchdog,
        cancelUpload: (@Sendable () -> Void)?,
        uploadProgress: (@Sendable (Int64) -> Void)? = nil,
        uploadLength: Int64? = nil,
        mayBeResent: Bool = true
    ) {
        self.method = method
        self.mayBeResent = mayBeResent
        self.deadline = deadline
        self.watchdog = watchdog
        self.url = url
        self.limits = limits
        self.lane = lane
        self.cancelUpload = cancelUpload
        self.uploadProgress = uploadProgress
        self.uploadLength = uploadLength
        #if canImport(FoundationNetworking)
            self.delivery = lane.deliveryQueue.begin()
        #endif
    }

    // MARK: Caller side

    /// Watches the call's deadline, the connect timeout and the idle timeout, from now on.
    func startTimers() {
        watchdog.watch(self)
    }

    /// Starts `task` unless the call already failed; resumes `continuation` with the head or the failure.
    ///
    /// Runs on the lane's control queue: URLSession's task methods wait for its work queue.
    func start(_ task: URLSessionTask, continuation: CheckedContinuation<HTTPResponse, any Error>) {
        let failure: (any Error)? = state.withLock { state in
            if let failure = state.failure {
                state.redirect = .cancelRequested
                return failure
            }
            state.task = task
            state.headWaiter = continuation
            state.lastProgress = .now
            state.startedAt = .now
            return nil
        }
        if let failure {
            task.cancel()
            continuation.resume(throwing: failure)
            return
        }
        task.resume()
    }

    /// The next body chunk, `nil` at the end; throws the call's failure.
    func nextChunk() async throws -> ArraySlice<UInt8>? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                enum Next {
                    case chunk(ArraySlice<UInt8>?, resumeDelivery: Bool)
                    case failure(any Error)
                    case wait
                }
                let next: Next = state.withLock { state in
                    // Chunks still buffered when the transfer failed (kept only when the connection broke, see
                    // `didComplete(error:)`) are handed out before the failure: a stream reader keeps every byte
                    // that arrived.
                    if !state.chunks.isEmpty {
                        state.lastProgress = .now
                        let chunk = state.chunks.removeFirst()
                        state.buffered -= chunk.count
                        let resume = state.isPaused && state.buffered <= limits.highWaterMark / 2
                        if resume { state.isPaused = false }
                        return .chunk(chunk, resumeDelivery: resume)
                    }
                    if let failure = state.failure { return .failure(failure) }
                    if state.isComplete { return .chunk(nil, resumeDelivery: false) }
                    state.bodyWaiter = continuation
                    return .wait
                }
                switch next {
                case .chunk(let chunk, let resumeDelivery):
                    if resumeDelivery {
                        self.syncDelivery()
                        // Not held back any more: the idle timeout applies again, from this read.
                        self.watchdog.watch(self)
                    }
                    continuation.resume(returning: chunk)
                case .failure(let error):
                    continuation.resume(throwing: error)
                case .wait:
                    break
                }
            }
        } onCancel: {
            self.fail(CancellationError())
        }
    }

    /// The body was dropped or its iteration ended: stop the transfer if it is still running.
    func consumerDidLeave() {
        let running = state.withLock { !$0.isComplete && $0.failure == nil }
        if running { fail(CancellationError()) }
    }

    /// Fails the call with `error` (unless it already ended): the waiters get `error` at once, then the URLSession
    /// task is cancelled on the lane's control queue.
    func fail(_ error: any Error) {
        fail(error, unlessConnected: false)
    }

    /// Fails the request with `error` (see ``fail(_:)``); with `unlessConnected`, only while no sign of its
    /// connection has come. Returns whether it failed the request.
    @discardableResult
    private func fail(_ error: any Error, unlessConnected: Bool) -> Bool {
        let settled = state.withLock { state -> Settled? in
            guard state.failure == nil, !(unlessConnected && state.isConnected) else { return nil }
            state.failure = error
            var settled = Self.settle(&state)
            if settled.task != nil, !settled.wasComplete, state.redirect == .none {
                state.redirect = .cancelRequested
            } else {
                settled.task = nil
            }
            return settled
        }
        guard let settled else { return false }
        watchdog.remove(self)
        releaseDelivery()
        cancelUpload?()
        settled.resume(throwing: error)
        if let task = settled.task {
            lane.control.async { task.cancel() }
        }
        return true
    }

    // MARK: URLSession side (delegate queue)

    /// Whether the delegate may answer a redirect of this task (see ``SessionDelegate``).
    func answerRedirect() -> Bool {
        state.withLock { state in
            guard state.redirect == .none else { return state.redirect == .answered }
            state.redirect = .answered
            return true
        }
    }

    /// Takes the head of a redirect the session never delivered, when the task completes without one.
    ///
    /// FoundationNetworking does not pass a 301–308 to the delegate while it means to follow it, and when the
    /// `Location` turns out unusable (an empty one, which RFC 3986 resolves to the current URL) it completes the task
    /// without ever delivering that response. The head is then the task's response, and its body is not available.
    func adoptUndeliveredRedirect(_ response: URLResponse?) {
        guard let response = response as? HTTPURLResponse, (300...399).contains(response.statusCode),
            state.withLock({ $0.head == nil && $0.failure == nil })
        else { return }
        didReceive(response: response)
        state.withLock { $0.expectedLength = nil }
    }

    /// Ends the task at the authentication challenge the delegate declined (a `401` or `407` with
    /// `WWW-Authenticate`). FoundationNetworking delivers that response, then holds the task for any answer but
    /// `.rejectProtectionSpace` until the idle timeout; that one cancels the task. So the challenge's response is the
    /// task's head (taken here if it has not arrived), the body is what arrived before, and the cancellation that
    /// follows ends it.
    func endAtChallenge(_ response: URLResponse?) {
        if let response, state.withLock({ $0.head == nil && $0.failure == nil }) {
            didReceive(response: response)
        }
        state.withLock {
            guard $0.failure == nil else { return }
            $0.expectedLength = nil
            $0.endsAtCancellation = true
        }
    }

    func didReceive(response: URLResponse) {
        let head: HTTPResponse
        let framing: URLSessionTransport.Framing
        do {
            guard let response = response as? HTTPURLResponse else {
                throw CourierError(code: .unexpectedResponse, stage: .transport, message: "not an HTTP response")
            }
            head = try URLSessionTransport.makeResponseHead(response)
            framing = try URLSessionTransport.framing(of: head, method: method)
        } catch {
            fail(error)
            return
        }
        let waiter = state.withLock { state -> CheckedContinuation<HTTPResponse, any Error>? in
            guard state.failure == nil, state.head == nil else { return nil }
            state.head = head
            state.isConnected = true
            state.lastProgress = .now
            state.expectedLength = framing.expectedLength
            if framing.isEncoded {
                var limit = limits.maxDecompressedBytes
                if let compressed = framing.contentLength {
                    let (product, overflow) = compressed.multipliedReportingOverflow(by: limits.maxDecompressionRatio)
                    if !overflow { limit = min(limit, max(product, compressed)) }
                }
                state.decodedLimit = limit
            }
            defer { state.headWaiter = nil }
            return state.headWaiter
        }
        waiter?.resume(returning: head)
    }

    func didReceive(data: Data) {
        enum Outcome {
            case none
            case deliver(CheckedContinuation<ArraySlice<UInt8>?, any Error>, ArraySlice<UInt8>)
            case pause
            case tooLarge(limit: Int64)
            case unread(Int)
        }
        let chunk = ArraySlice(data)
        let outcome: Outcome = state.withLock { state in
            guard state.failure == nil, !state.isComplete else { return .none }
            state.received += Int64(chunk.count)
            state.lastProgress = .now
            if let limit = state.decodedLimit, state.received > limit {
                return .tooLarge(limit: limit)
            }
            if let waiter = state.bodyWaiter {
                state.bodyWaiter = nil
                return .deliver(waiter, chunk)
            }
            state.chunks.append(chunk)
            state.buffered += chunk.count
            if state.buffered > limits.maxUnreadBytes {
                return .unread(state.buffered)
            }
            if !state.isPaused && state.buffered > limits.highWaterMark {
                state.isPaused = true
                return .pause
            }
            return .none
        }
        switch outcome {
        case .none:
            break
        case .deliver(let waiter, let chunk):
            waiter.resume(returning: chunk)
        case .pause:
            syncDelivery()
        case .unread(let count):
            fail(
                CourierError(
                    code: .unsupported,
                    stage: .transport,
                    message: "unsupported: \(count) response bytes were left unread; URLSession on Linux cannot "
                        + "pause a download, so a body must be read while it arrives",
                    response: state.withLock { $0.head }
                )
            )
        case .tooLarge(let limit):
            fail(
                CourierError(
                    code: .decompressionLimit,
                    stage: .transport,
                    message: "the compressed body inflates past \(limit) bytes (size or ratio limit)",
                    response: state.withLock { $0.head }
                )
            )
        }
    }

    func didSendBodyData(totalBytesSent: Int64) {
        // URLSession counts every byte the task sent, a body libcurl sent again included: the progress stays within
        // the body's length, only moves forward, and stops when the task has completed or failed.
        let sent = uploadLength.map { min(totalBytesSent, $0) } ?? totalBytesSent
        let reports = state.withLock { state in
            state.lastProgress = .now
            state.isConnected = true
            guard uploadProgress != nil, !state.isComplete, state.failure == nil, sent > state.reportedSent else {
                return false
            }
            state.reportedSent = sent
            return true
        }
        if reports { uploadProgress?(sent) }
    }

    func didComplete(error: (any Error)?) {
        // First: the task has ended, so nothing reads the upload any more, and a spooled body's file is gone before
        // the reader can see the end of the response.
        cancelUpload?()
        let outcome = state.withLock { state -> (Settled, (any Error)?)? in
            guard state.failure == nil, !state.isComplete else { return nil }
            let failure: (any Error)?
            let error = state.endsAtCancellation && (error as? URLError)?.code == .cancelled ? nil : error
            if let error {
                var mapped = URLSessionTransport.map(
                    error,
                    response: state.head,
                    received: state.received,
                    expected: state.expectedLength
                )
                if mayBeResent, var unsent = mapped as? CourierError, unsent.isKnownUnsent {
                    // Refused on a reconnect after URLSession's own resend: the first try may have reached the server.
                    unsent.isKnownUnsent = false
                    mapped = unsent
                }
                failure = mapped
            } else if state.head == nil {
                failure = CourierError(code: .unexpectedResponse, stage: .transport, message: "no response head")
            } else if let expected = state.expectedLength, state.received < expected {
                failure = CourierError(
                    code: .truncatedResponse,
                    stage: .transport,
                    message: "truncated: received \(state.received) of \(expected) bytes",
                    response: state.head
                )
            } else {
                failure = nil
            }
            if let failure {
                state.failure = failure
                // The bytes that arrived before the connection broke are still the reader's.
                return (Self.settle(&state, keepingChunks: true), failure)
            }
            state.isComplete = true
            var settled = Settled()
            settled.bodyWaiter = state.bodyWaiter
            state.bodyWaiter = nil
            state.isPaused = false
            return (settled, nil)
        }
        releaseDelivery()
        guard let (settled, failure) = outcome else { return }
        watchdog.remove(self)
        if let failure {
            settled.resume(throwing: failure)
        } else {
            settled.bodyWaiter?.resume(returning: nil)
        }
    }

    // MARK: Internals

    private struct Settled {
        var headWaiter: CheckedContinuation<HTTPResponse, any Error>?
        var bodyWaiter: CheckedContinuation<ArraySlice<UInt8>?, any Error>?
        var task: URLSessionTask?
        var wasComplete = false

        func resume(throwing error: any Error) {
            headWaiter?.resume(throwing: error)
            bodyWaiter?.resume(throwing: error)
        }
    }

    /// Takes the waiters out of a state that just failed and drops the buffered chunks, unless `keepingChunks`.
    private static func settle(_ state: inout State, keepingChunks: Bool = false) -> Settled {
        let settled = Settled(
            headWaiter: state.headWaiter,
            bodyWaiter: state.bodyWaiter,
            task: state.task,
            wasComplete: state.isComplete
        )
        state.headWaiter = nil
        state.bodyWaiter = nil
        if !keepingChunks {
            state.chunks = []
            state.buffered = 0
        }
        state.isPaused = false
        return settled
    }

    enum Alarm {
        case sleep(until: ContinuousClock.Instant)
        case fire(CourierError)
        /// The connect timeout passed without a sign of a connection: find out whether the server is reachable,
        /// and check the other timers again at `recheck` meanwhile.
        case probe(host: String, port: Int, timeout: Duration, recheck: ContinuousClock.Instant)
    }

    /// What the ``Watchdog`` does next: check again at an instant, fire a timer, probe the connection, or stop
    /// watching (`nil`: the request ended).
    ///
    /// - The call's deadline fires `CourierError.Code.timedOut`.
    /// - The idle timeout fires `CourierError.Code.idleTimeout` when no byte arrived (and the reader took none)
    ///   for that long, before the head or in the body, unless the transfer is held back for a slow reader.
    /// - Before any sign of a connection, the connect timeout asks ``ConnectProbe`` whether the server can be
    ///   reached at all; if not, it fires `CourierError.Code.connectTimeout`.
    func nextAlarm(now: ContinuousClock.Instant) -> Alarm? {
        state.withLock { state -> Alarm? in
            guard state.failure == nil, !state.isComplete else { return nil }
            if let deadline, now >= deadline {
                return .fire(CourierError(code: .timedOut, stage: .transport, message: "the call's deadline passed"))
            }
            var wake = deadline ?? now.advanced(by: .seconds(3600))
            if let idle = limits.idleTimeout, !state.isPaused {
                let idleDue = state.lastProgress + idle
                if now >= idleDue {
                    return .fire(
                        CourierError(
                            code: .idleTimeout,
                            stage: .transport,
                            message: "no byte arrived for \(idle) (idle timeout)",
                            response: state.head
                        )
                    )
                }
                wake = min(wake, idleDue)
            }
            if !state.isConnected, !state.isProbing {
                let connectDue = state.startedAt + limits.connectTimeout
                if now >= connectDue {
                    guard let target = url.flatMap(ConnectProbe.target(for:)) else {
                        return .fire(
                            CourierError(
                                code: .connectTimeout,
                                stage: .transport,
                                message: "no response within the connect timeout (\(limits.connectTimeout))"
                            )
                        )
                    }
                    let probeTimeout = min(.seconds(1), max(.milliseconds(50), limits.connectTimeout / 10))
                    state.isProbing = true
                    return .probe(host: target.host, port: target.port, timeout: probeTimeout, recheck: wake)
                }
                wake = min(wake, connectDue)
            }
            return .sleep(until: wake)
        }
    }

    /// A connect probe reached the server: only the idle timeout and the deadline apply from now on.
    func markConnected() {
        state.withLock { $0.isConnected = true }
    }

    /// A connect probe could not reach the server either: fails the request with the connect timeout, unless a
    /// sign of its connection came while the probe ran (its own connection won the race: a server slow to accept
    /// takes one connection and not the next). Returns whether it failed the request.
    func probeFailed() -> Bool {
        fail(
            CourierError(
                code: .connectTimeout,
                stage: .transport,
                message: "no connection within the connect timeout (\(limits.connectTimeout))"
            ),
            unlessConnected: true
        )
    }

    /// Holds back or lets go the transfer as `state.isPaused` now says.
    ///
    /// The reader's thread lets go and the delegate's holds back, each after deciding under the state's lock: a call
    /// made after its decision could land after the other's newer one. A resume that overtook a pause left the
    /// transfer running while `isPaused` said held back, so it was never held back again and the buffer grew to
    /// `maxUnreadBytes`; a pause that overtook a resume held the transfer for good. Applied one at a time under
    /// `appliedPause`, each reading the state's latest word, the last one leaves the transfer as the state says.
    private func syncDelivery() {
        appliedPause.withLock { applied in
            let paused = state.withLock { $0.isPaused }
            guard paused != applied else { return }
            if paused { pauseDelivery() } else { resumeDelivery() }
            applied = paused
        }
    }

    private func pauseDelivery() {
        #if canImport(FoundationNetworking)
            lane.deliveryQueue.pause(delivery)
        #else
            // Darwin's suspend() pauses reading without restarting the transfer and does not block. A resume can
            // overtake it (the reader's thread is another): the caller checks again afterwards.
            state.withLock { $0.task }?.suspend()
        #endif
    }

    private func resumeDelivery() {
        #if canImport(FoundationNetworking)
            lane.deliveryQueue.resume(delivery)
        #else
            state.withLock { $0.task }?.resume()
        #endif
    }

    /// The request ended: its transfer is never held back again.
    private func releaseDelivery() {
        #if canImport(FoundationNetworking)
            lane.deliveryQueue.release(delivery)
        #else
            if let task = state.withLock({ $0.task }), task.state == .suspended { task.resume() }
        #endif
    }
}

extension Duration {
    /// The duration in seconds, as Foundation and Dispatch count them.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
