/// How far a transfer has come: bytes sent or received so far, and the total when it is known.
public struct TransferProgress: Hashable, Sendable, CustomStringConvertible {
    /// Which way the bytes go.
    public enum Direction: Hashable, Sendable {
        /// The request body, as it is handed to the transport.
        case upload
        /// The response body, as it arrives.
        case download
    }

    /// Which way the bytes go.
    public var direction: Direction
    /// Bytes done so far in this attempt.
    public var completedBytes: Int64
    /// The total, when the body's length is known.
    public var totalBytes: Int64?
    /// The 1-based attempt (a redirect or retry starts counting again).
    public var attempt: Int

    /// `completedBytes / totalBytes`, when the total is known (1 for a known total of 0).
    public var fractionCompleted: Double? {
        guard let totalBytes else { return nil }
        guard totalBytes > 0 else { return 1 }
        return min(1, Double(completedBytes) / Double(totalBytes))
    }

    /// `upload 512/1024 B`.
    public var description: String {
        "\(direction) \(completedBytes)/\(totalBytes.map(String.init) ?? "?") B"
    }
}

/// A call in flight with its progress: ``progress`` yields updates until the call ends, ``value`` awaits the
/// result.
///
/// ```swift
/// let transfer = client.transfer(UploadPhoto(file: url))
/// Task { for await step in transfer.progress { bar.update(step.fractionCompleted ?? 0) } }
/// let receipt = try await transfer.value
/// ```
public struct Transfer<Value: Sendable>: Sendable {
    /// Progress updates, upload then download, for every attempt; finishes when the call ends.
    public let progress: AsyncStream<TransferProgress>
    private let task: Task<Value, any Error>

    init(progress: AsyncStream<TransferProgress>, task: Task<Value, any Error>) {
        self.progress = progress
        self.task = task
    }

    /// The call's result.
    ///
    /// Cancelling the task that awaits it cancels the call, as cancelling a ``Client/send(_:)`` does (a SwiftUI
    /// `.task` that ends stops its upload): awaiting a `Task`'s value would not pass the cancellation on, and the
    /// call would go on, or wait for ever on a server that stalls.
    ///
    /// - Throws: What ``Client/send(_:)`` throws; `CancellationError` when the call or the awaiting task is cancelled.
    public var value: Value {
        get async throws {
            try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        }
    }

    /// Cancels the call.
    public func cancel() { task.cancel() }
}

extension Client {
    /// Starts `request` and returns a handle with its upload and download progress as an `AsyncSequence`.
    ///
    /// The call runs in a new task; cancel it with ``Transfer/cancel()``, by cancelling the task that awaits
    /// ``Transfer/value``, or with ``cancelAll(tagged:)`` from the moment this returns. Progress counts the bytes Courier
    /// hands to the transport (upload) and receives from it (download), the same way on every transport; a body sent
    /// from memory or from a file by URLSession itself counts the bytes URLSession reports sent.
    ///
    /// The progress sequence finishes when ``Transfer/value`` is ready. For a ``LiveResponse`` that is when the head
    /// arrives: its body is read afterwards, by you, so its download is not reported here (count the chunks as you
    /// read them; ``LiveResponse/length`` is the total when the server declared it).
    ///
    /// - Parameters:
    ///   - request: The request to send.
    ///   - tags: Labels for ``cancelAll(tagged:)`` (the uploads of a screen, say), as for ``send(_:tags:)``.
    public func transfer<R: Request>(_ request: R, tags: Set<RequestTag> = []) -> Transfer<R.Response> {
        let (stream, continuation) = AsyncStream<TransferProgress>.makeStream(bufferingPolicy: .bufferingNewest(256))
        // The entry is made here, before the task starts: a `cancelAll` right after this returns finds the call.
        let ticket = registry.enterUnlessExempt(tags: tags)
        let task = Task {
            defer { continuation.finish() }
            let pipeline = Pipeline(client: self, request: request, progress: { continuation.yield($0) })
            return try await registry.run(ticket) { try await pipeline.run() }
        }
        return Transfer(progress: stream, task: task)
    }
}
