import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The one delegate of a transport's `URLSession`: routes each callback to the ``ResponseTask`` of its task.
///
/// It refuses every redirect, so the 3xx response itself reaches Courier, whose decisions follow redirects the
/// same way on every transport (stripping credentials on a change of origin, which URLSession on Linux does not).
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let tasks = LockedBox([Int: ResponseTask]())

    func register(_ responseTask: ResponseTask, for task: URLSessionTask) {
        tasks.withLock { $0[task.taskIdentifier] = responseTask }
    }

    private func responseTask(for task: URLSessionTask) -> ResponseTask? {
        tasks.withLock { $0[task.taskIdentifier] }
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
        responseTask(for: task)?.didSendBodyData()
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        // A one-shot body cannot be produced twice; URLSession then fails the task.
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let responseTask = tasks.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        responseTask?.didComplete(error: error)
    }
}
