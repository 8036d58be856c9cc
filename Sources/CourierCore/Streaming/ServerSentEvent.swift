/// One event of a Server-Sent Events stream (`text/event-stream`), as the WHATWG HTML standard dispatches it.
///
/// An ``EventStreamParser`` makes one on each blank line that ends a block with `data`:
///
/// ```
/// event: delta
/// id: 42
/// data: {"text":"Hel
/// data: lo"}
///
/// ```
///
/// gives `ServerSentEvent(id: "42", type: "delta", data: "{\"text\":\"Hel\nlo\"}")`.
///
/// ```swift
/// for try await event in body.serverSentEvents() where event.type == "delta" {
///     print(event.data)
/// }
/// ```
public struct ServerSentEvent: Hashable, Sendable {
    /// The stream's last event ID when the event was dispatched, or `nil` when it is empty.
    ///
    /// As in a browser's `MessageEvent.lastEventId`, this is not only this event's own `id` field: an ID carries
    /// over to the events after it until another `id` field changes it. The standard's empty string is `nil`
    /// here: no `id` field yet, or an `id` field with an empty value (which tells the client to send no
    /// `Last-Event-ID` when it reconnects). An ``EventStreamParser`` never makes an empty ID.
    public var id: String?

    /// The event type: the block's `event` field, or `"message"` when it had none (or an empty one).
    public var type: String

    /// The event's data: the values of its `data` fields joined by line feeds (`"\n"`).
    public var data: String

    /// The reconnection time the event's block set with a valid `retry` field, or `nil` when it set none.
    ///
    /// The stream's reconnection time persists after the event; ``EventStreamParser/reconnectionTime`` holds it.
    public var retry: Duration?

    /// Creates an event.
    ///
    /// - Parameters:
    ///   - id: The stream's last event ID at dispatch; `nil` (not `""`) for none.
    ///   - type: The event type, `"message"` by default.
    ///   - data: The data, its lines joined by line feeds.
    ///   - retry: The reconnection time set by the event's block, if any.
    public init(id: String? = nil, type: String = "message", data: String, retry: Duration? = nil) {
        self.id = id
        self.type = type
        self.data = data
        self.retry = retry
    }
}

/// A Server-Sent Event whose data was decoded to `Payload`, from
/// ``_Concurrency/AsyncSequence/serverSentEvents(of:decoder:limits:terminator:)``.
public struct TypedServerSentEvent<Payload: Sendable>: Sendable {
    /// The stream's last event ID when the event was dispatched, or `nil` for none (see ``ServerSentEvent/id``).
    public var id: String?
    /// The event type, `"message"` when the block had none.
    public var type: String
    /// The event's data, decoded.
    public var data: Payload
    /// The reconnection time the event's block set with a valid `retry` field, or `nil` when it set none.
    public var retry: Duration?

    /// Creates an event.
    ///
    /// - Parameters:
    ///   - id: The stream's last event ID at dispatch; `nil` for none.
    ///   - type: The event type.
    ///   - data: The decoded data.
    ///   - retry: The reconnection time set by the event's block, if any.
    public init(id: String? = nil, type: String = "message", data: Payload, retry: Duration? = nil) {
        self.id = id
        self.type = type
        self.data = data
        self.retry = retry
    }
}

extension TypedServerSentEvent: Equatable where Payload: Equatable {}
extension TypedServerSentEvent: Hashable where Payload: Hashable {}
