#if OpenAPI
    import CourierCore
    import Foundation
    import HTTPTypes
    import OpenAPIRuntime

    /// One generated operation as a Courier call: what every attempt starts from, and the adapter that puts the
    /// generated method, query, header fields and body on each attempt's request.
    ///
    /// A class: the pipeline copies its request several times per call, and a copy of this is then one reference
    /// instead of about ten (issue #19). Its own adapter, so that the request's adapter list holds a reference,
    /// which fits in the existential, instead of boxing a separate adapter value on every call.
    final class Operation: InPlaceAdapter {
        let operationID: String
        let method: HTTPRequest.Method
        /// The path part of the generated path, percent-encoded as generated.
        let path: String
        /// The generated query, exactly as the generated code encoded it.
        let query: String?
        let headerFields: HTTPFields
        let body: MessageBody?
        let server: Server?
        let decisions: [any Decision]
        let timeout: Duration?

        /// - Throws: ``CourierError/Code/invalidURL`` when the generated request has no path.
        init(
            generated: HTTPRequest,
            body: MessageBody?,
            operationID: String,
            server: Server?,
            decisions: [any Decision],
            timeout: Duration?
        ) throws {
            guard let target = generated.path else {
                throw CourierError(
                    code: .invalidURL, stage: .resolve,
                    message: "the generated request of \(operationID) has no path")
            }
            // Searched as bytes ('#' and '?' are ASCII, so their indices are character boundaries): a search by
            // `Character` breaks the whole path into graphemes.
            let bytes = target.utf8
            let end = bytes.firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex
            let queryStart = bytes[..<end].firstIndex(of: UInt8(ascii: "?"))
            self.operationID = operationID
            self.method = generated.method
            self.path = String(target[..<(queryStart ?? end)])
            self.query = queryStart.map { String(target[bytes.index(after: $0)..<end]) }
            self.headerFields = generated.headerFields
            self.body = body
            self.server = server
            self.decisions = decisions
            self.timeout = timeout
        }

        var name: String { "openAPI" }

        /// Puts the generated method, query, header fields and body on the outgoing request.
        ///
        /// The query is kept exactly as the generated code encoded it. The generated fields replace the server's
        /// fields of the same names; the client's adapters (authentication, user agent) run after this one.
        func adapt(_ request: inout OutgoingRequest, context: AdapterContext) async throws {
            request.head.method = method
            if let query, !query.isEmpty {
                request.head.path = (request.head.path ?? "/") + "?" + query
            }
            if !headerFields.isEmpty {
                // A name that repeats is removed once and then found absent: no set of names to build per attempt.
                for field in headerFields { request.head.headerFields[field.name] = nil }
                request.head.headerFields.append(contentsOf: headerFields)
            }
            request.body = body
        }

        /// The Courier request for this operation, its response parsed by `parser`.
        func parsed<Parser: ResponseParser>(by parser: Parser) -> OperationRequest<Parser.Output> {
            OperationRequest(operation: self, parser: parser)
        }
    }

    /// A generated operation as a Courier ``Request``: named after the operation ID, shaped by the generated request.
    struct OperationRequest<Response: Sendable>: Request, ReturnsForeignRedirects {
        let operation: Operation
        let parser: any ResponseParser<Response>

        var method: HTTPRequest.Method { operation.method }
        var path: String { operation.path }
        var server: Server? { operation.server }
        var timeout: Duration? { operation.timeout }
        var adapters: [any RequestAdapter] { [operation] }
        var decisions: [any Decision] { operation.decisions }
        var requestName: String { operation.operationID }
    }

    /// Returns the buffered response as it is: head and body.
    struct BufferedResponseParser: ResponseParser {
        func parse(_ response: ReceivedResponse, context: ParseContext) throws -> ReceivedResponse { response }
    }

    extension MessageBody {
        /// A body that streams `body`'s chunks: replayable when `body` can be iterated again.
        init(streaming body: HTTPBody) {
            let length: MessageBody.Length =
                switch body.length {
                case .known(let count): .known(count)
                case .unknown: .unknown
                }
            self.init(
                body, length: length,
                iterationBehavior: body.iterationBehavior == .multiple ? .multiple : .single)
        }
    }
#endif
