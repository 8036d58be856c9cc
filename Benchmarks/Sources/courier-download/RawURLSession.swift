import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The URLSession baseline: a plain `URLSessionDataDelegate` that writes each chunk to a `FileHandle` as it arrives
/// (and `fsync`s at the end, as Courier's `DownloadParser` does), on the same server, so the URLSession transport's
/// figures can be read against what URLSession itself costs.
///
/// On Linux, FoundationNetworking cannot hold a transfer back: what it reads ahead of the delegate is memory this
/// baseline pays too.
final class RawURLSessionDownload: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // `@unchecked Sendable`: `handle`, `count`, `failure` and `continuation` are touched only on the session's
    // delegate queue, a serial `OperationQueue` (maxConcurrentOperationCount 1), after `download` set them up.
    private var handle: FileHandle?
    private var count: Int64 = 0
    private var failure: (any Error)?
    private var continuation: CheckedContinuation<Int64, any Error>?

    /// `GET /stream-bytes/{bytes}` into `destination`.
    ///
    /// - Returns: The bytes written.
    func download(from baseURL: URL, bytes: Int, to destination: URL) async throws -> Int64 {
        guard FileManager.default.createFile(atPath: destination.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        handle = try FileHandle(forWritingTo: destination)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let session = URLSession(configuration: .ephemeral, delegate: self, delegateQueue: queue)
        defer { session.finishTasksAndInvalidate() }
        let url = baseURL.appendingPathComponent("stream-bytes/\(bytes)")
        return try await withCheckedThrowingContinuation { continuation in
            queue.addOperation {
                self.continuation = continuation
                session.dataTask(with: url).resume()
            }
        }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        if status != 200 { failure = UnexpectedStatus(code: status) }
        completionHandler(status == 200 ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        do {
            try handle?.write(contentsOf: data)
            count += Int64(data.count)
        } catch {
            failure = failure ?? error
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let outcome: Result<Int64, any Error>
        do {
            if let error = failure ?? error { throw error }
            try handle?.synchronize()
            outcome = .success(count)
        } catch {
            outcome = .failure(error)
        }
        try? handle?.close()
        handle = nil
        continuation?.resume(with: outcome)
        continuation = nil
    }
}
