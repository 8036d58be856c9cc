#if AsyncHTTPClient
    import AsyncHTTPClient
    import CourierCore
    import HTTPTypes
    import NIOCore
    import NIOHTTP1

    extension AsyncHTTPClientTransport {
        static func makeRequest(_ request: OutgoingRequest) throws -> HTTPClientRequest {
            let head = request.head
            guard let scheme = head.scheme, let authority = head.authority else {
                throw CourierError(code: .invalidURL, stage: .transport, message: "the request has no scheme or host")
            }
            var ahcRequest = HTTPClientRequest(url: "\(scheme)://\(authority)\(head.path ?? "/")")
            ahcRequest.method = HTTPMethod(rawValue: head.method.rawValue)
            var headers = HTTPHeaders()
            headers.reserveCapacity(head.headerFields.count)
            for field in head.headerFields {
                headers.add(name: field.name.rawName, value: field.value)
            }
            ahcRequest.headers = headers
            if let body = request.body {
                if let bytes = body.bufferedBytes {
                    ahcRequest.body = .bytes(ByteBuffer(bytes: bytes))
                } else {
                    let length: HTTPClientRequest.Body.Length
                    switch body.length {
                    case .known(let count): length = .known(count)
                    case .unknown: length = .unknown
                    }
                    ahcRequest.body = .stream(RequestBodySequence(base: body), length: length)
                }
            }
            return ahcRequest
        }

        static func makeResponseHead(_ response: HTTPClientResponse) -> HTTPResponse {
            var fields = HTTPFields()
            fields.reserveCapacity(response.headers.count)
            for (name, value) in response.headers {
                if let fieldName = HTTPField.Name(name) {
                    fields.append(HTTPField(name: fieldName, value: value))
                }
            }
            return HTTPResponse(
                status: HTTPResponse.Status(
                    code: Int(response.status.code), reasonPhrase: response.status.reasonPhrase),
                headerFields: fields
            )
        }
    }

    /// A Courier body as the `ByteBuffer` sequence AsyncHTTPClient uploads.
    struct RequestBodySequence: AsyncSequence, Sendable {
        typealias Element = ByteBuffer
        let base: MessageBody

        struct AsyncIterator: AsyncIteratorProtocol {
            var base: MessageBody.AsyncIterator
            mutating func next() async throws -> ByteBuffer? {
                guard let chunk = try await base.next() else { return nil }
                return ByteBuffer(bytes: chunk)
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator()) }
    }

    /// An AsyncHTTPClient response body as the byte chunks a Courier body yields, with errors translated.
    struct ResponseBodySequence: AsyncSequence, Sendable {
        typealias Element = ArraySlice<UInt8>
        let base: HTTPClientResponse.Body
        let timeouts: AsyncHTTPClientTransport.Timeouts

        struct AsyncIterator: AsyncIteratorProtocol {
            var base: HTTPClientResponse.Body.AsyncIterator
            let timeouts: AsyncHTTPClientTransport.Timeouts

            mutating func next() async throws -> ArraySlice<UInt8>? {
                do {
                    guard var buffer = try await base.next() else { return nil }
                    return ArraySlice(buffer.readBytes(length: buffer.readableBytes) ?? [])
                } catch {
                    throw AsyncHTTPClientTransport.translate(error, phase: .body, timeouts: timeouts)
                }
            }
        }

        func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(base: base.makeAsyncIterator(), timeouts: timeouts)
        }
    }
#endif
