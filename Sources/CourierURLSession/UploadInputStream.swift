import CourierCore
import Foundation

#if canImport(FoundationNetworking)
    /// A bounded buffer between a streamed `MessageBody` and the ``UploadInputStream`` libcurl reads.
    ///
    /// Linux has no `Stream.getBoundStreams`, so the request's `httpBodyStream` is an ``UploadInputStream`` over
    /// this pipe. libcurl reads it synchronously on the session's work queue: ``read(into:maxLength:)`` blocks until
    /// ``pump(_:)`` (running in a `Task`) has produced bytes, and ``pump(_:)`` suspends while `capacity` bytes are
    /// buffered, so the whole body is never held in memory. While a read waits for the body's producer,
    /// FoundationNetworking's work queue (shared by every session of the process) waits too.
    ///
    /// - Important: `@unchecked Sendable` is sound because every mutable property is private and only accessed
    ///   while `condition` (an `NSCondition`) is locked; continuations are resumed after unlocking.
    final class UploadPipe: @unchecked Sendable {
        private let condition = NSCondition()
        private let capacity: Int
        private var chunks: [ArraySlice<UInt8>] = []
        private var buffered = 0
        private var finished = false
        private var failed = false
        private var spaceWaiter: CheckedContinuation<Bool, Never>?

        init(capacity: Int) {
            self.capacity = capacity
        }

        /// Copies `body` into the stream; returns the body's error, if iterating it failed or it produced another
        /// number of bytes than its known length (then the stream fails before its end, so libcurl aborts the upload
        /// and the server never sees a complete body: as AsyncHTTPClient and the spool do).
        func pump(_ body: MessageBody) async -> (any Error)? {
            let declared = body.length.knownCount
            var count: Int64 = 0
            do {
                for try await chunk in body where !chunk.isEmpty {
                    count += Int64(chunk.count)
                    if let declared, count > declared {
                        throw UploadSpool.lengthMismatch(produced: "more than \(declared)", declared: declared)
                    }
                    guard await waitForSpace() else { return nil }
                    append(chunk)
                }
                // A body cut short because the upload was cancelled (the response came first, or the call ended)
                // is not the body's fault: nothing to report, and the response must not be replaced.
                if isCancelled { return nil }
                if let declared, count != declared {
                    throw UploadSpool.lengthMismatch(produced: "\(count)", declared: declared)
                }
                finish(failing: false)
                return nil
            } catch {
                let cancelled = isCancelled
                finish(failing: true)
                return cancelled ? nil : error
            }
        }

        /// Whether the upload was cancelled (``cancel()``, or the pump's task): the pipe ended before its body.
        private var isCancelled: Bool {
            if Task.isCancelled { return true }
            condition.lock()
            defer { condition.unlock() }
            return finished && failed
        }

        private func append(_ chunk: ArraySlice<UInt8>) {
            condition.lock()
            chunks.append(chunk)
            buffered += chunk.count
            condition.broadcast()
            condition.unlock()
        }

        /// Ends the pipe early: a blocked or later read returns -1, which makes libcurl abort the upload.
        func cancel() {
            finish(failing: true)
        }

        private func finish(failing: Bool) {
            condition.lock()
            finished = true
            failed = failed || failing
            let waiter = spaceWaiter
            spaceWaiter = nil
            condition.broadcast()
            condition.unlock()
            waiter?.resume(returning: false)
        }

        /// Suspends while the buffer is full; `false` once the stream was cancelled.
        private func waitForSpace() async -> Bool {
            await withCheckedContinuation { continuation in
                condition.lock()
                if finished {
                    condition.unlock()
                    continuation.resume(returning: false)
                } else if buffered < capacity {
                    condition.unlock()
                    continuation.resume(returning: true)
                } else {
                    spaceWaiter = continuation
                    condition.unlock()
                }
            }
        }

        /// Whether a read can still return bytes (or must be tried to learn that the body failed).
        var hasBytesAvailable: Bool {
            condition.lock()
            defer { condition.unlock() }
            return !(finished && chunks.isEmpty && !failed)
        }

        /// Blocks until bytes are available; returns how many were copied, 0 at the end, -1 when cancelled.
        func read(into buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
            condition.lock()
            while chunks.isEmpty && !finished {
                condition.wait()
            }
            if failed || chunks.isEmpty {
                let result = failed ? -1 : 0
                condition.unlock()
                return result
            }
            var copied = 0
            while copied < length, let first = chunks.first {
                let count = min(length - copied, first.count)
                first.prefix(count).withUnsafeBufferPointer { source in
                    if let base = source.baseAddress {
                        (buffer + copied).update(from: base, count: count)
                    }
                }
                copied += count
                if count == first.count {
                    chunks.removeFirst()
                } else {
                    chunks[0] = first.dropFirst(count)
                }
            }
            buffered -= copied
            let waiter = buffered < capacity ? spaceWaiter : nil
            if waiter != nil { spaceWaiter = nil }
            condition.unlock()
            waiter?.resume(returning: true)
            return copied
        }
    }

    /// The request's `httpBodyStream` on Linux: an `InputStream` that reads an ``UploadPipe``.
    ///
    /// FoundationNetworking calls ``open()``, then ``hasBytesAvailable`` and ``read(_:maxLength:)`` on its work
    /// queue until `hasBytesAvailable` is `false` or a read returns 0 (the end) or -1 (abort).
    final class UploadInputStream: InputStream {
        private let pipe: UploadPipe
        private let status = LockedBox(Stream.Status.notOpen)

        init(pipe: UploadPipe) {
            self.pipe = pipe
            super.init(data: Data())
        }

        override func open() {
            status.withLock { $0 = .open }
        }

        override func close() {
            status.withLock { $0 = .closed }
            pipe.cancel()
        }

        override var streamStatus: Stream.Status {
            status.withLock { $0 }
        }

        override var hasBytesAvailable: Bool {
            // FoundationNetworking treats `false` as the end of the body, so "not yet" must be `true`.
            pipe.hasBytesAvailable
        }

        override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
            pipe.read(into: buffer, maxLength: length)
        }

        override func getBuffer(
            _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>,
            length: UnsafeMutablePointer<Int>
        ) -> Bool {
            false
        }
    }
#endif
