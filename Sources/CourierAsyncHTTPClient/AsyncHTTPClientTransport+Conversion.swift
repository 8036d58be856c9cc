#if AsyncHTTPClient
    import AsyncHTTPClient
    import CourierCore
    import Foundation
    import HTTPTypes
    import NIOCore
    import NIOHTTP1
    import NIOHTTPCompression

    extension AsyncHTTPClientTransport {
        static func makeRequest(_ request: OutgoingRequest, watch: UploadWatch? = nil) throws -> HTTPClientRequest {
            let head = request.head
            guard let scheme = head.scheme, let authority = head.authority else {
                throw CourierError(code: .invalidURL, stage: .transport, message: "the request has no scheme or host")
            }
            var ahcRequest = HTTPClientRequest(url: "\(scheme)://\(authority)\(head.path ?? "/")")
            ahcRequest.method = HTTPMethod(rawValue: head.method.rawValue)
            var headers = HTTPHeaders()
            headers.reserveCapacity(head.headerFields.count)
            var cookies = 0
            for field in head.headerFields {
                if field.name == .cookie {
                    cookies += 1
                } else {
                    headers.add(name: field.name.rawName, value: field.value)
                }
            }
            // One Cookie field (RFC 6265 §5.4: servers read one; HTTPFields joins several with "; "). Over HTTP/2,
            // AsyncHTTPClient may split it again, which RFC 9113 §8.2.3 allows.
            if cookies > 0, let cookie = head.headerFields[.cookie] {
                headers.add(name: "Cookie", value: cookie)
            }
            ahcRequest.headers = headers
            if let body = request.body {
                if let count = body.bufferedCount {
                    // One copy, into the buffer: a body made from `Data` is not first copied into an array.
                    let buffer =
                        body.bufferedData.map { ByteBuffer(bytes: $0) } ?? ByteBuffer(bytes: body.bufferedBytes ?? [])
                    guard count > Self.wholeBodyLimit else {
                        ahcRequest.body = .bytes(buffer)
                        return ahcRequest
                    }
                    // AsyncHTTPClient writes a `.bytes` body in one piece and starts its idle (read) timer as soon as
                    // the request's end is queued, while most of the body may still wait in NIO's buffer: a large
                    // body on a slow uplink failed with `idleTimeout` mid-upload. In slices, the end is queued only
                    // once the rest fits in the socket's buffers (AsyncHTTPClient takes a slice when the connection
                    // is writable), so the timer starts when the upload is nearly done. No copy: the slices share
                    // one buffer.
                    ahcRequest.body = .stream(
                        BufferSlices(buffer: buffer, sliceSize: uploadSliceSize, watch: watch),
                        length: .known(Int64(count)))
                } else {
                    let length: HTTPClientRequest.Body.Length
                    switch body.length {
                    case .known(let count): length = .known(count)
                    case .unknown: length = .unknown
                    }
                    ahcRequest.body = .stream(RequestBodySequence(base: body, watch: watch), length: length)
                }
            }
            return ahcRequest
        }

        /// Whether AsyncHTTPClient takes `body` in chunks: a stream, or an in-memory body above ``wholeBodyLimit``.
        static func sendsInChunks(_ body: MessageBody) -> Bool {
            body.bufferedCount.map { $0 > wholeBodyLimit } ?? true
        }

        /// The largest in-memory body sent in one piece; a larger one goes in slices of ``uploadSliceSize``.
        static let wholeBodyLimit = 256 * 1024
        /// The slice size of a large in-memory body, that of NIO's default high write watermark.
        static let uploadSliceSize = 64 * 1024

        /// A response head as Courier's transports hand it over, with what the body's framing needs from it.
        struct ResponseHead {
            var head: HTTPResponse
            /// The `Content-Length` value, when the response has exactly one such field.
            var contentLength: Int64?
            /// Whether a `Content-Encoding` field names a coding other than `identity`.
            var isEncoded = false
        }

        /// Converts AsyncHTTPClient's response head, reading `Content-Length` and `Content-Encoding` on the way (one
        /// pass over the fields instead of a lookup by name for each afterwards: issue #17's profile showed those
        /// lookups at about 1 µs per call).
        static func makeResponseHead(_ response: HTTPClientResponse) -> ResponseHead {
            var fields = HTTPFields()
            fields.reserveCapacity(response.headers.count)
            var length: String?
            var lengthFields = 0
            var encodings: [String] = []
            for (name, value) in response.headers {
                guard let fieldName = HTTPField.Name(name) else { continue }
                let field = HTTPField(name: fieldName, value: value)
                fields.append(field)
                if fieldName == .contentLength {
                    length = field.value
                    lengthFields += 1
                } else if fieldName == .contentEncoding {
                    encodings.append(field.value)
                }
            }
            let head = HTTPResponse(
                status: HTTPResponse.Status(
                    code: Int(response.status.code), reasonPhrase: response.status.reasonPhrase),
                headerFields: fields
            )
            // Joined only when there is a Content-Encoding field: most responses have none (issue #17's profile).
            let joinedEncodings = encodings.isEmpty ? "" : encodings.joined(separator: ", ")
            return ResponseHead(
                head: head,
                contentLength: lengthFields == 1 ? length.flatMap { Int64($0) } : nil,
                isEncoded: !joinedEncodings.isEmpty && joinedEncodings != "identity"
            )
        }
    }

    /// A Courier body as the `ByteBuffer` sequence AsyncHTTPClient uploads, each chunk's hand-over told to `watch`.
    struct RequestBodySequence: AsyncSequence, Sendable {
        typealias Element = ByteBuffer
        let base: MessageBody
        let watch: UploadWatch?

        struct AsyncIterator: AsyncIteratorProtocol {
            var base: MessageBody.AsyncIterator
            let watch: UploadWatch?
            mutating func next() async throws -> ByteBuffer? {
                watch?.asked()
                guard let chunk = try await base.next() else {
                    watch?.finished()
                    return nil
                }
                watch?.handedOver()
                return ByteBuffer(bytes: chunk)
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), watch: watch) }
    }

    /// An in-memory body as slices of one buffer, each slice's hand-over told to `watch`.
    struct BufferSlices: AsyncSequence, Sendable {
        typealias Element = ByteBuffer
        let buffer: ByteBuffer
        let sliceSize: Int
        let watch: UploadWatch?

        struct AsyncIterator: AsyncIteratorProtocol {
            var rest: ByteBuffer
            let sliceSize: Int
            let watch: UploadWatch?
            mutating func next() async -> ByteBuffer? {
                watch?.asked()
                let length = Swift.min(sliceSize, rest.readableBytes)
                guard length > 0, let slice = rest.readSlice(length: length) else {
                    watch?.finished()
                    return nil
                }
                watch?.handedOver()
                return slice
            }
        }

        func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(rest: buffer, sliceSize: Swift.max(1, sliceSize), watch: watch)
        }
    }

    /// An AsyncHTTPClient response body as the byte chunks a Courier body yields, with errors translated; read
    /// whole, its buffers are gathered as they come and copied into `Data` once.
    struct ResponseBodySequence: CollectableBytes {
        typealias Element = ArraySlice<UInt8>
        let base: HTTPClientResponse.Body
        let timeouts: AsyncHTTPClientTransport.Timeouts
        /// Whether `ChannelError.ioOnClosedChannel` ends the body: AsyncHTTPClient's own close of an HTTP/1.1
        /// connection after a response of 300 or more that stopped the upload (see `transportResponse`).
        let endsAtOwnClose: Bool
        /// The proxy client's lease, for a response through a proxy: the client is not shut down while its body is
        /// read (see `SharedClients`).
        let lease: AsyncHTTPClientTransport.ProxyLease?
        /// Whether a reader that holds back gets a read-ahead (`PacedBody`): over HTTP/1, for a body AsyncHTTPClient
        /// does not decompress.
        var paced = true
        /// Whether the head says there is no body (`Content-Length: 0`, a HEAD, a 204 or 304) although it names a
        /// coding AsyncHTTPClient decodes: NIO's decoder then fails the empty body as cut short (`truncatedData`),
        /// where there was nothing to decode.
        var emptyByHead = false

        /// Read chunk by chunk (a live body, an event stream, a download): through a `PacedBody`, which reads ahead
        /// while the reader holds back, so that the connection is not closed as idle meanwhile.
        struct AsyncIterator: AsyncIteratorProtocol {
            let reading: AsyncHTTPClientTransport.PacedBody.Reading
            let timeouts: AsyncHTTPClientTransport.Timeouts
            let endsAtOwnClose: Bool
            let lease: AsyncHTTPClientTransport.ProxyLease?
            let emptyByHead: Bool

            mutating func next() async throws -> ArraySlice<UInt8>? {
                do {
                    guard var buffer = try await reading.body.next() else { return nil }
                    return ArraySlice(buffer.readBytes(length: buffer.readableBytes) ?? [])
                } catch ChannelError.ioOnClosedChannel where endsAtOwnClose {
                    return nil
                } catch let error as NIOHTTPDecompression.ExtraDecompressionError
                    where emptyByHead && error == .truncatedData
                {
                    return nil
                } catch let error as HTTPClientError where error == .readTimeout && reading.body.stoppedReadingAhead {
                    let limit = AsyncHTTPClientTransport.PacedBody.readAheadLimit / 1_048_576
                    throw CourierError(
                        code: .idleTimeout,
                        stage: .transport,
                        message: "the body's reader held back until \(limit) MiB were read ahead for it, then for "
                            + "\(timeouts.idleText) more: the connection was closed",
                        underlyingError: error
                    )
                } catch {
                    throw AsyncHTTPClientTransport.translate(error, phase: .body, timeouts: timeouts)
                }
            }
        }

        func makeAsyncIterator() -> AsyncIterator {
            // Paced on HTTP/1 without decompression only (see `PacedBody`).
            let body = AsyncHTTPClientTransport.PacedBody(base, idle: paced ? timeouts.idle : nil)
            return AsyncIterator(
                reading: .init(body), timeouts: timeouts, endsAtOwnClose: endsAtOwnClose, lease: lease,
                emptyByHead: emptyByHead)
        }

        func collect(upTo limit: Int) async throws -> Data {
            let collected: ByteBuffer
            do {
                // NIO traps on a negative limit; 0 refuses any byte, as a negative one did.
                collected =
                    endsAtOwnClose
                    ? try await Self.gatherUntilClosed(base, upTo: Swift.max(limit, 0))
                    : try await Self.gather(base, upTo: Swift.max(limit, 0))
            } catch is NIOTooManyBytesError {
                throw CourierError.bodyTooLarge(limit: limit, announced: nil)
            } catch let error as NIOHTTPDecompression.ExtraDecompressionError
                where emptyByHead && error == .truncatedData
            {
                return Data()
            } catch {
                throw AsyncHTTPClientTransport.translate(error, phase: .body, timeouts: timeouts)
            }
            return collected.withUnsafeReadableBytes { bytes in
                guard let start = bytes.baseAddress, !bytes.isEmpty else { return Data() }
                return Data(bytes: start, count: bytes.count)
            }
        }

        /// NIO's `collect(upTo:)` for a sequence of `ByteBuffer`s: it keeps the first buffer and appends the rest to
        /// it. Not `HTTPClientResponse.Body.collect(upTo:)`, which shadows it there: that one also compares the limit
        /// with `Content-Length`, which for a body AsyncHTTPClient decompresses is the compressed size (Courier's
        /// body compares the length it announces itself, in `MessageBody.collect(upTo:)`).
        private static func gather<Buffers: AsyncSequence>(
            _ buffers: Buffers, upTo limit: Int
        ) async throws -> ByteBuffer where Buffers.Element == ByteBuffer {
            try await buffers.collect(upTo: limit)
        }

        /// ``gather(_:upTo:)`` that ends at `ChannelError.ioOnClosedChannel`, keeping what arrived before it.
        @inline(never)
        private static func gatherUntilClosed(
            _ buffers: HTTPClientResponse.Body, upTo limit: Int
        ) async throws -> ByteBuffer {
            var collected = ByteBuffer()
            do {
                for try await var buffer in buffers {
                    guard collected.readableBytes + buffer.readableBytes <= limit else {
                        throw NIOTooManyBytesError(maxBytes: limit)
                    }
                    collected.writeBuffer(&buffer)
                }
            } catch ChannelError.ioOnClosedChannel {}
            return collected
        }
    }
#endif
