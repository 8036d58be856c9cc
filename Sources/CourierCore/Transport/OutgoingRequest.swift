public import Foundation
public import HTTPTypes

/// The request as it will go over the wire: an `HTTPRequest` head and an optional body.
///
/// Adapters receive and return this value; transports send it. The head's `scheme`, `authority` and `path`
/// pseudo-header fields carry the absolute URL; the `path` field includes the percent-encoded query.
public struct OutgoingRequest: Sendable {
    /// The request line and header fields.
    public var head: HTTPRequest
    /// The body, if any.
    public var body: MessageBody?

    /// Creates an outgoing request.
    public init(head: HTTPRequest, body: MessageBody? = nil) {
        self.head = head
        self.body = body
    }

    /// The absolute URL of the request, built from the head's pseudo-header fields.
    public var url: URL? { head.url }

    /// The request's origin (scheme, host and port), if its URL has one.
    public var origin: Origin? { url.flatMap(Origin.init(url:)) }
}

/// What a transport returns: the response head and its streamed body.
public struct TransportResponse: Sendable {
    /// The status line and header fields.
    public var head: HTTPResponse
    /// The body, streamed; read it once.
    public var body: MessageBody
    /// The protocol the response came over, as ALPN names it (`h2`, `http/1.1`), when the transport knows it.
    public var negotiatedProtocol: String?

    /// Creates a transport response.
    public init(head: HTTPResponse, body: MessageBody, negotiatedProtocol: String? = nil) {
        self.head = head
        self.body = body
        self.negotiatedProtocol = negotiatedProtocol
    }
}
