import CourierCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The delegate of a lane's `URLSession`: routes each callback to the ``ResponseTask`` of its task.
///
/// It refuses every redirect, so the 3xx response itself reaches Courier, whose decisions follow redirects the
/// same way on every transport (stripping credentials on a change of origin, which URLSession on Linux does not).
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    /// A closure kept in a struct, so that it is stored at its own abstraction.
    ///
    /// A bare function type stored in a `LockedBox` grows on every read: `withLock { $0 }` passes the value
    /// `inout` to a closure of a generic function, so Swift wraps it in a reabstraction thunk on the way in and in
    /// another on the way back, and stores the wrapped closure. A lane's completion handler, read once per request,
    /// became a chain of thousands of thunks that every later request ran through (measured: 147 µs of CPU per
    /// request after a few seconds of sequential requests on one lane). In a struct the closure is never
    /// reabstracted.
    struct Callback: Sendable {
        let run: @Sendable () -> Void
    }

    private struct Tasks {
        var byIdentifier: [Int: ResponseTask] = [:]
        /// Set by ``failAll(_:)``: a request registered after it (one that had its lane before the transport shut
        /// down, and its task after) fails with it too, before its task starts.
        var failure: (any Error)?
    }

    private let tasks = LockedBox(Tasks())
    private let taskCompleted = LockedBox<Callback?>(nil)

    /// Sets what runs after each task's last callback (the lane is free again).
    func onTaskComplete(_ body: @escaping @Sendable () -> Void) {
        taskCompleted.withLock { $0 = Callback(run: body) }
    }

    /// Routes `task`'s callbacks to `responseTask`; fails it at once when the session's requests were failed
    /// (``failAll(_:)``), so that ``ResponseTask/start(_:continuation:)`` then cancels the task unstarted.
    func register(_ responseTask: ResponseTask, for task: URLSessionTask) {
        let failure = tasks.withLock { tasks -> (any Error)? in
            tasks.byIdentifier[task.taskIdentifier] = responseTask
            return tasks.failure
        }
        if let failure { responseTask.fail(failure) }
    }

    /// Fails every request of this session, and every one registered from now on (the transport is shutting down).
    func failAll(_ error: any Error) {
        let failed = tasks.withLock { tasks -> [ResponseTask] in
            tasks.failure = tasks.failure ?? error
            return Array(tasks.byIdentifier.values)
        }
        for responseTask in failed {
            responseTask.fail(error)
        }
    }

    private func responseTask(for task: URLSessionTask) -> ResponseTask? {
        tasks.withLock { $0.byIdentifier[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        responseTask(for: dataTask)?.didReceive(response: response)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        responseTask(for: dataTask)?.didReceive(data: data)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        responseTask(for: task)?.didSendBodyData(totalBytesSent: totalBytesSent)
    }

    /// Refuses the redirect, so the 3xx response completes the task.
    ///
    /// FoundationNetworking reaches this callback only after the whole 3xx response was read, and stops with a
    /// `fatalError` ("Received callback for HTTP redirection, but we're not waiting for it") if the answer arrives
    /// after the task was cancelled. So the answer and a cancellation exclude each other: once the transport has
    /// asked the task to cancel, the redirect is not answered (the cancelled task completes without it); once it is
    /// answered, the task is never cancelled (it completes by itself right after, with the 3xx response).
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        if let responseTask = responseTask(for: task), !responseTask.answerRedirect() { return }
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        // libcurl asks for the body again when a reused connection died after some of the body was sent and it
        // resends the request on a new one. The task fails as a reset connection, so Courier's retry decision decides
        // (an idempotent method with a replayable body is retried, visibly). This cannot stop libcurl: the head has
        // gone out again by the time the cancellation runs (FoundationNetworking's rewind succeeds with no stream, and
        // holds the work queue of every session while it waits for this answer), and a request without a body, or
        // one whose connection died before its body was sent, is resent without asking. So a request that must not
        // be sent twice never goes out on a reused connection (`URLSessionTransport.needsFreshConnection(_:)`).
        responseTask(for: task)?.fail(
            CourierError(
                code: .connectionReset,
                stage: .transport,
                message: "the connection was reset before a response arrived (URLSession would have replayed the body)"
            )
        )
        completionHandler(nil)
    }

    /// Declines HTTP authentication (Basic, Digest, NTLM, Negotiate): a `401` with `WWW-Authenticate` comes back as
    /// the response it is, for Courier's adapters and refresh decision, which do authentication on every transport.
    /// Without an answer here FoundationNetworking held such a task until the idle timeout (60 s by default) and it
    /// failed with `idleTimeout`; a credential from URLSession's own storage would also bypass Courier's rule that
    /// credentials go to the client's origins only. Other challenges (server trust) get the default handling.
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(Darwin)
            let method = challenge.protectionSpace.authenticationMethod
            if method == NSURLAuthenticationMethodServerTrust || method == NSURLAuthenticationMethodClientCertificate {
                completionHandler(.performDefaultHandling, nil)
                return
            }
        #else
            // FoundationNetworking raises HTTP authentication challenges only, and declining one cancels the task:
            // the cancellation that follows ends the body.
            responseTask(for: task)?.endAtChallenge(challenge.failureResponse)
        #endif
        completionHandler(.rejectProtectionSpace, nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let responseTask = tasks.withLock { $0.byIdentifier.removeValue(forKey: task.taskIdentifier) }
        if error == nil { responseTask?.adoptUndeliveredRedirect(task.response) }
        responseTask?.didComplete(error: error)
        taskCompleted.withLock { $0 }?.run()
    }
}
