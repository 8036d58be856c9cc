public import CourierCore
import HTTPTypes
import Logging

#if canImport(FoundationNetworking)
    import Foundation
    public import FoundationNetworking
#else
    public import Foundation
#endif

/// A `Transport` that sends requests with `URLSession` (FoundationNetworking on Linux).
///
/// The transport owns its sessions and their delegates, so it controls what URLSession would otherwise do on its
/// own:
/// - it never follows a redirect: the 3xx response is returned, and Courier's redirect decision follows it;
/// - it returns as soon as the response head arrives and streams the body, holding the transfer back while more
///   than `responseBufferSize` unread bytes are buffered, so a download takes bounded memory at its reader's pace;
/// - it counts the bytes URLSession decompresses and fails with `CourierError.Code.decompressionLimit` past
///   `maxDecompressedBytes`, or past `maxDecompressionRatio` times a compressed body's `Content-Length`;
/// - it rejects a response with conflicting `Content-Length` values (`CourierError.Code.malformedResponse`),
///   and reports a body shorter than its `Content-Length` as `CourierError.Code.truncatedResponse`, never as a
///   success;
/// - cancelling the calling `Task` (before the head, or while the body is read) throws `CancellationError` at once
///   and cancels the URLSession task; a passed `TransportContext.deadline` fails with
///   `CourierError.Code.timedOut` at the deadline, without waiting for URLSession.
///
/// ```swift
/// let client = Client(server: .production, transport: URLSessionTransport())
/// ```
///
/// On Linux, FoundationNetworking cannot pause a download, so the transport holds back its work queue while a reader
/// is behind, for at most a second (that queue is shared by every session of the process). Each request in flight
/// has a session of its own, and idle sessions are reused (with their open connections) by later requests: up to
/// 64 of them; one idle for more than 60 s is closed when the next request starts or ends. A request whose method is
/// not idempotent (`POST`, `PATCH`) gets a new session, and so a new connection: libcurl resends a request by itself
/// when a reused connection dies before the response, and such a request must never be sent twice. A streamed
/// request body is sent chunked as it is produced, without being held in memory; a `MessageBody.file(at:)` body is
/// sent from its file with its size as `Content-Length`. FoundationNetworking cannot send a
/// `GET` with a body: that fails with `CourierError.Code.unsupported`.
///
/// On Apple platforms one session serves every request, and a streamed body of any size is written to a private
/// temporary file first, then sent from it (removed when the request ends): never held in memory either, but sent
/// once it has ended. A `MessageBody.file(at:)` body is sent from its own file.
public final class URLSessionTransport: Transport {
    /// The largest streamed request body that was collected in memory on Apple platforms. No longer a limit: such a
    /// body now goes through a temporary file, whatever its size.
    @available(*, deprecated, message: "streamed request bodies are no longer collected in memory; there is no limit")
    public static let maxBufferedUploadBytes = 64 * 1024 * 1024

    /// How a streamed request body reaches URLSession.
    enum StreamedUploads: Sendable {
        /// Through a bounded pipe that libcurl reads as the body is produced (Linux only: FoundationNetworking reads
        /// a custom `InputStream`; elsewhere this means ``spool``).
        case pipe
        /// Through a temporary file sent with `uploadTask(with:fromFile:)` (``UploadSpool``): Apple platforms, and
        /// Linux in tests, so that the Apple path runs here too.
        case spool

        static var platformDefault: StreamedUploads {
            #if canImport(FoundationNetworking)
                .pipe
            #else
                .spool
            #endif
        }
    }

    let streamedUploads: StreamedUploads
    /// Where ``StreamedUploads/spool`` writes its files (`nil`: the temporary directory).
    let spoolDirectory: URL?

    /// How many idle sessions (Linux) are kept for reuse, with their open connections (at most
    /// `maxConcurrentRequests`). As many as the default limit: with fewer (it was 16), a client that keeps 64 requests in
    /// flight made a new session and a new connection for most requests, and used 1.5× raw URLSession's CPU per request;
    /// with 64 it uses less than raw URLSession.
    static let maxIdleSessions = 64

    /// How long an idle session is kept for reuse (AsyncHTTPClient's pool keeps an idle connection as long).
    static let maxIdleTime = Duration.seconds(60)

    let lanes: LanePool
    let limits: ResponseTask.Limits
    /// The timers of every request in flight.
    let watchdog = Watchdog()
    /// The configuration's `httpAdditionalHeaders`, which the transport adds to each request itself (see
    /// ``takeAdditionalHeaders(from:)``).
    let additionalHeaders: [(name: HTTPField.Name, value: String)]

    /// A configuration suited to Courier: no cookie storage, no URL cache, no credential storage.
    ///
    /// Courier has its own cache and authentication; letting URLSession store cookies or responses would apply
    /// them behind Courier's back.
    public static func defaultConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        withoutOwnStores(configuration)
        return configuration
    }

    /// Turns off `configuration`'s cookies, cache and credential storage: URLSession's own would send stored cookies
    /// behind Courier's back (corelibs-foundation ignores the request's `httpShouldHandleCookies`) and answer from a
    /// cache Courier does not know. Courier's `HTTPCache` and authentication replace the cache and the credentials;
    /// Courier keeps no cookies: a `Set-Cookie` reaches the caller in the response head, and an adapter sends a
    /// `Cookie` back (scoped to the client's servers, as every credential header).
    private static func withoutOwnStores(_ configuration: URLSessionConfiguration) {
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.urlCache = nil
        configuration.urlCredentialStorage = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    }

    /// Creates a transport with its own `URLSession`s.
    ///
    /// - Parameters:
    ///   - configuration: The sessions' configuration. The transport copies it (later changes have no effect),
    ///     sets its `timeoutIntervalForRequest` a little above `idleTimeout`, as a backstop (the transport's own
    ///     timers fire first, with their own codes), and turns off URLSession's cookies, cache and credential
    ///     storage (Courier's `HTTPCache` and authentication replace the last two; Courier keeps no cookies: send
    ///     a `Cookie` with an adapter). Its
    ///     `httpAdditionalHeaders` are added to each request that does not set them, except credentials
    ///     (`Authorization`, `Cookie`, `X-Api-Key` and the other headers the default `Redactor` treats as secret:
    ///     URLSession sent them to every origin a redirect led to; give credentials to an `Authenticator` or an
    ///     adapter) and fields that are not valid HTTP.
    ///   - connectTimeout: How long establishing a connection may take. Default: 10 s. URLSession reports no
    ///     "connected" event, so when no sign of a connection (a response head, request body bytes sent) came
    ///     within this time, the transport makes one plain TCP connect to the server: if that fails too, the call
    ///     fails with `CourierError.Code.connectTimeout`; if it succeeds, the server is up and only the idle
    ///     timeout may end the wait, as on every Courier transport.
    ///   - idleTimeout: How long the response may be silent (no byte of the head or the body) before the call
    ///     fails with `CourierError.Code.idleTimeout`; `nil` disables it. Default: 60 s.
    ///   - maxDecompressedBytes: The most bytes a body with a `Content-Encoding` may decompress to.
    ///   - maxDecompressionRatio: The most a body with a `Content-Encoding` and a `Content-Length` may grow by
    ///     when decompressed.
    ///   - responseBufferSize: How many unread response bytes are buffered before the transfer is held back until
    ///     the reader has drained half of them. On Linux a reader that does not drain its body within a second
    ///     stops holding back the process's other URLSession transfers; its body then fails with
    ///     `CourierError.Code.unsupported` once more than 16 × `responseBufferSize` (at least 64 MiB) are unread.
    ///   - maxConcurrentRequests: On Linux, the most requests in flight at once (each has a session of its own);
    ///     more wait, first come first served, for one to end. Like a connection pool's limit, it counts a
    ///     response whose body is still held. Ignored on Apple platforms.
    public convenience init(
        configuration: URLSessionConfiguration = URLSessionTransport.defaultConfiguration(),
        connectTimeout: Duration = .seconds(10),
        idleTimeout: Duration? = .seconds(60),
        maxDecompressedBytes: Int = 100 * 1024 * 1024,
        maxDecompressionRatio: Int = 100,
        responseBufferSize: Int = 4 * 1024 * 1024,
        maxConcurrentRequests: Int = 64
    ) {
        self.init(
            configuration: configuration,
            connectTimeout: connectTimeout,
            idleTimeout: idleTimeout,
            maxDecompressedBytes: maxDecompressedBytes,
            maxDecompressionRatio: maxDecompressionRatio,
            responseBufferSize: responseBufferSize,
            maxConcurrentRequests: maxConcurrentRequests,
            streamedUploads: .platformDefault
        )
    }

    /// The public initializer's work, with the way streamed bodies go chosen (tests run the Apple way on Linux).
    init(
        configuration: URLSessionConfiguration,
        connectTimeout: Duration,
        idleTimeout: Duration?,
        maxDecompressedBytes: Int,
        maxDecompressionRatio: Int,
        responseBufferSize: Int,
        maxConcurrentRequests: Int,
        streamedUploads: StreamedUploads,
        spoolDirectory: URL? = nil
    ) {
        self.streamedUploads = streamedUploads
        self.spoolDirectory = spoolDirectory
        self.limits = ResponseTask.Limits(
            maxDecompressedBytes: Int64(max(0, maxDecompressedBytes)),
            maxDecompressionRatio: Int64(max(1, maxDecompressionRatio)),
            highWaterMark: max(1, responseBufferSize),
            maxUnreadBytes: max(64 * 1024 * 1024, 16 * max(1, responseBufferSize)),
            connectTimeout: connectTimeout,
            idleTimeout: idleTimeout
        )
        let configuration = configuration.copy() as? URLSessionConfiguration ?? configuration
        configuration.timeoutIntervalForRequest = Self.backstop(idleTimeout)
        Self.withoutOwnStores(configuration)  // a configuration of yours too, such as `.default`
        self.additionalHeaders = Self.takeAdditionalHeaders(from: configuration)
        self.lanes = LanePool(
            configuration: configuration,
            maxLanes: maxConcurrentRequests,
            maxIdleLanes: Self.maxIdleSessions,
            maxIdleTime: Self.maxIdleTime
        )
    }

    deinit {
        shutdown()
    }

    /// The valid fields of `configuration`'s `httpAdditionalHeaders` but credentials, which it then no longer has.
    ///
    /// URLSession adds those fields to every request it sends, after Courier has validated the request and, after
    /// a redirect to another origin, stripped its credentials: an `Authorization` given there went to every origin
    /// a redirect led to. The transport adds them itself, to fields a request does not set, except credentials
    /// (`Authorization`, `Proxy-Authorization`, `Cookie` and every header `Redactor.defaultSensitiveHeaderNames`
    /// lists, such as `X-Api-Key`: Courier's `Authenticator` and adapters scope them to a server) and
    /// fields that are not valid HTTP, which it drops.
    static func takeAdditionalHeaders(
        from configuration: URLSessionConfiguration
    ) -> [(name: HTTPField.Name, value: String)] {
        let headers = configuration.httpAdditionalHeaders ?? [:]
        configuration.httpAdditionalHeaders = nil
        // Every header a redirect to another origin strips (with the default `Redactor`): `X-Api-Key` too.
        let redactor = Redactor.default
        return headers.compactMap { key, value in
            guard let text = key as? String, let name = HTTPField.Name(text), !redactor.isOriginBound(name),
                let value = value as? String, HTTPField.isValidValue(value)
            else { return nil }
            return (name, value)
        }
        .sorted { $0.name.rawName < $1.name.rawName }
    }

    /// URLSession's own idle timeout: above the transport's, so the transport's timers fire first.
    static func backstop(_ idleTimeout: Duration?) -> TimeInterval {
        guard let idleTimeout else { return 7 * 24 * 3600 }
        return idleTimeout.timeInterval.rounded(.up) + 2
    }

    /// Cancels every request in flight and releases the sessions; later calls to ``send(_:context:)`` fail.
    ///
    /// Calling it more than once is harmless. The transport calls it when it is deinitialized.
    public func shutdown() {
        lanes.shutDown(failing: CancellationError())
    }

    /// Sends `request` and returns once the response head has arrived; the body streams afterwards.
    ///
    /// - Parameters:
    ///   - request: The adapted, validated request.
    ///   - context: The deadline and logger for this call.
    /// - Returns: The response head and its one-shot body. Its length is known when the response has a
    ///   `Content-Length` and no `Content-Encoding`.
    /// - Throws: `CancellationError` when the task is cancelled; `CourierError` with
    ///   `CourierError.Code.timedOut` (deadline), `CourierError.Code.idleTimeout` (URLSession's request timeout),
    ///   `CourierError.Code.connectTimeout`, `CourierError.Code.connectionRefused`,
    ///   `CourierError.Code.connectionReset`, `CourierError.Code.hostNotFound`,
    ///   `CourierError.Code.truncatedResponse` (a body cut short),
    ///   `CourierError.Code.malformedResponse` (conflicting `Content-Length`), `CourierError.Code.unsupported`,
    ///   or `CourierError.Code.transportFailed` (anything else). A `URLError` is kept as the underlying error.
    ///   Body reads throw the same errors, and `CourierError.Code.decompressionLimit`.
    public func send(_ request: OutgoingRequest, context: TransportContext) async throws -> TransportResponse {
        try Task.checkCancellation()
        try Self.checkTLS(context.tls, for: request.head)
        try Self.checkProxy(context.proxy, for: request.head)
        // FoundationNetworking refuses it, and Apple's URLSession fails it with NSURLErrorDataLengthExceedsMaximum
        // (since iOS 13 and macOS 10.15), after a streamed body was spooled to a file for nothing.
        if request.head.method == .get, let body = request.body, body.unobserved.bufferedCount != 0 {
            throw CourierError(
                code: .unsupported,
                stage: .transport,
                message: "unsupported: URLSession cannot send a GET request with a body"
            )
        }
        var urlRequest = try Self.makeURLRequest(
            request.head, deadline: context.deadline, backstop: Self.backstop(limits.idleTimeout),
            additional: additionalHeaders)
        var cancelUpload: (@Sendable () -> Void)?
        // Starts the task that feeds a streamed body into Linux's pipe, once the request's task exists.
        #if canImport(FoundationNetworking)
            var startPump: (@Sendable (ResponseTask) -> Void)?
        #else
            let startPump: (@Sendable (ResponseTask) -> Void)? = nil  // only Linux's pipe pumps
        #endif
        // The file URLSession sends the body from (`uploadTask(with:fromFile:)`), if it does.
        var spoolURL: URL?
        // Progress of a body sent from memory or from a file: URLSession's count of the bytes sent. The body is sent
        // as without progress (`unobserved`): from memory with its Content-Length, from its file, or spooled once.
        var uploadProgress: (@Sendable (Int64) -> Void)?
        if let body = request.body {
            if let data = body.unobserved.bufferedData {
                urlRequest.httpBody = data  // shared, not copied
                uploadProgress = body.progressReport
            } else if let bytes = body.unobserved.bufferedBytes {
                urlRequest.httpBody = Data(bytes)
                uploadProgress = body.progressReport
            } else {
                #if canImport(FoundationNetworking)
                    // A file body goes from its file, with its size as Content-Length (below): chunked, a
                    // presigned PUT would answer 411 Length Required.
                    if streamedUploads == .pipe, body.unobserved.fileURL == nil {
                        // libcurl sends a body stream chunked; a Content-Length next to it would make the request
                        // framing ambiguous (RFC 9112 §6.3), so the stream goes without one.
                        urlRequest.setValue(nil, forHTTPHeaderField: "Content-Length")
                        let stream = UploadPipe(capacity: 1024 * 1024)
                        urlRequest.httpBodyStream = UploadInputStream(pipe: stream)
                        let pumpTask = LockedBox<Task<Void, Never>?>(nil)
                        cancelUpload = {
                            stream.cancel()
                            pumpTask.withLock { $0 }?.cancel()
                        }
                        startPump = { responseTask in
                            pumpTask.withLock {
                                $0 = Task {
                                    if let error = await stream.pump(body) {
                                        responseTask.fail(Self.requestBodyError(error))
                                    }
                                }
                            }
                        }
                    }
                #endif
                if startPump == nil {
                    uploadProgress = body.progressReport
                    let body = body.unobserved
                    if let url = body.fileURL {
                        // A file body (`MessageBody.file(at:)`): URLSession sends the file itself, no copy.
                        let count = try Self.sizeOfFile(at: url, stated: body.length)
                        urlRequest.setValue(String(count), forHTTPHeaderField: "Content-Length")
                        // The file a link names (a Kubernetes secret is a link to a link): given the link,
                        // FoundationNetworking sent less than the Content-Length and the server waited for the rest.
                        spoolURL = url.resolvingSymlinksInPath()
                    } else {
                        let file = try await UploadSpool.write(
                            body, in: spoolDirectory ?? FileManager.default.temporaryDirectory)
                        // The file's size, which URLSession sends (equal to a known length: `write` checks).
                        urlRequest.setValue(String(file.count), forHTTPHeaderField: "Content-Length")
                        spoolURL = file.url
                        cancelUpload = { file.remove() }
                    }
                }
            }
        }
        let lane: SessionLane
        do {
            lane = try await lanes.checkOut(
                deadline: context.deadline,
                priority: context.lane == .priority,
                fresh: Self.needsFreshConnection(request.head)
            )
        } catch {
            cancelUpload?()
            throw error
        }
        let responseTask = ResponseTask(
            method: request.head.method,
            url: urlRequest.url,
            limits: limits,
            deadline: context.deadline,
            lane: lane,
            watchdog: watchdog,
            cancelUpload: cancelUpload,
            uploadProgress: uploadProgress,
            uploadLength: request.body?.length.knownCount,
            // An idempotent (or keyed) request, which libcurl and CFNetwork may resend on a new connection; the
            // others go on a connection of their own on Linux (`needsFreshConnection`), and CFNetwork does not
            // resend them.
            mayBeResent: RetryPolicy.default.allowsRetry(of: request.head)
        )
        responseTask.startTimers()
        startPump?(responseTask)
        context.logger.debug("URLSession request starting", metadata: ["method": "\(request.head.method)"])
        let finalRequest = urlRequest
        let uploadFile = spoolURL
        let head = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                lane.control.async {
                    let task = lane.task {
                        uploadFile.map { lane.session.uploadTask(with: finalRequest, fromFile: $0) }
                            ?? lane.session.dataTask(with: finalRequest)
                    }
                    guard let task else {
                        // Shut down after this request took its lane: it fails as a request waiting for one does.
                        let error = CourierError(
                            code: .transportFailed, stage: .transport, message: "the transport was shut down",
                            isKnownUnsent: true)
                        responseTask.fail(error)
                        continuation.resume(throwing: error)
                        return
                    }
                    lane.delegate.register(responseTask, for: task)
                    responseTask.start(task, continuation: continuation)
                }
            }
        } onCancel: {
            responseTask.fail(CancellationError())
        }
        let length: MessageBody.Length
        do {
            length =
                try Self.framing(of: head, method: request.head.method).expectedLength.map { .known($0) }
                ?? .unknown
        } catch {
            responseTask.fail(error)
            throw error
        }
        let body = MessageBody(ResponseBodySequence(responseTask), length: length, iterationBehavior: .single)
        return TransportResponse(head: head, body: body)
    }

    /// Whether `head` must go out on a new connection: on Linux, a request whose method is not idempotent and that
    /// carries no `Idempotency-Key` (with one, the server recognises a resent request, as for Courier's own retries).
    ///
    /// libcurl (7.88 here) resends a request by itself, on a new connection, when a reused one fails before any byte
    /// of the response (`Curl_retry_request`: "Connection died, retrying a fresh connect"), whatever its method:
    /// without a body it resends it in full, and with one it first asks FoundationNetworking to rewind the body,
    /// which always says yes (its seek callback succeeds even when the delegate offers no new stream), then sends the
    /// head again. FoundationNetworking has no setting to stop this, but libcurl does it only on a reused connection:
    /// so a POST or PATCH goes out on a session that has never sent a request, and is never sent twice by the
    /// transport, at the cost of a connection (and a TLS handshake) each. Apple platforms are left as they were.
    static func needsFreshConnection(_ head: HTTPRequest) -> Bool {
        #if canImport(FoundationNetworking)
            // The rule of Courier's own retries: an idempotent method, or a non-empty idempotency key.
            !RetryPolicy.default.allowsRetry(of: head)
        #else
            false
        #endif
    }

    /// The size of the file a file body reads, which must still be the length the body states.
    static func sizeOfFile(at url: URL, stated: MessageBody.Length) throws -> Int64 {
        let size = (try? FileManager.default.attributesOfFile(at: url)[.size] as? NSNumber)?.int64Value
        guard let size else {
            throw CourierError(
                code: .invalidBody, stage: .transport, message: "cannot read the file to upload at \(url.path)")
        }
        if case .known(let expected) = stated, expected != size {
            throw CourierError(
                code: .invalidBody,
                stage: .transport,
                message: "the file to upload at \(url.path) has \(size) bytes; its body's length says \(expected)"
            )
        }
        return size
    }

    static func requestBodyError(_ error: any Error) -> any Error {
        if error is CancellationError || error is CourierError { return error }
        return CourierError(
            code: .transportFailed,
            stage: .transport,
            message: "reading the request body failed",
            underlyingError: error
        )
    }
}
