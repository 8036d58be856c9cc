public import Foundation

extension AsyncSequence where Element: Collection<UInt8> {
    /// The stream's Server-Sent Events, parsed as the chunks arrive.
    ///
    /// Each event is handed out as soon as the chunk holding its blank line arrives: no buffering until a size is
    /// reached. The next chunk is pulled only when the events of the last one have been consumed, and ending the
    /// iteration (a `break`, a cancelled task) stops pulling. An event the stream ends in the middle of is dropped.
    ///
    /// ```swift
    /// for try await event in body.serverSentEvents() {
    ///     if event.type == "delta" { print(event.data, terminator: "") }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - limits: The limits on one line and one event's data.
    ///   - lastEventID: The last event ID a previous connection left, which events carry until the stream sets
    ///     another (see ``EventStreamParser/init(limits:lastEventID:)``).
    /// - Returns: A sequence that throws ``CourierError/Code/lineTooLarge`` or ``CourierError/Code/eventTooLarge``
    ///   when a limit fires (after the events before it), what the base sequence throws, and `CancellationError`.
    public func serverSentEvents(limits: StreamLimits = .standard, lastEventID: String? = nil) -> ServerSentEvents<Self>
    {
        ServerSentEvents(base: self, parser: EventStreamParser(limits: limits, lastEventID: lastEventID))
    }

    /// The stream's Server-Sent Events with their data decoded from JSON, parsed as the chunks arrive.
    ///
    /// Each event's data is decoded when the event is handed out, in order; ``ServerSentEvent/id``,
    /// ``ServerSentEvent/type`` and ``ServerSentEvent/retry`` come along. An event whose data is exactly
    /// `terminator` ends the sequence without being decoded (OpenAI-style streams end with `data: [DONE]`).
    ///
    /// ```swift
    /// for try await chunk in body.serverSentEvents(of: CompletionChunk.self, terminator: "[DONE]") {
    ///     print(chunk.data.text, terminator: "")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - type: The type each event's data decodes to.
    ///   - decoder: The JSON decoder.
    ///   - limits: The limits on one line and one event's data.
    ///   - terminator: The data of an event that ends the stream, if any.
    /// - Returns: A sequence that throws, besides what ``serverSentEvents(limits:lastEventID:)`` throws,
    ///   ``CourierError/Code/decodingFailed`` (stage ``CourierError/Stage/parse``) for an event that does not decode:
    ///   the message names the event's index in the stream, its type, its ID and its size, never its data; the
    ///   `DecodingError` is the underlying error.
    public func serverSentEvents<Payload: Decodable & Sendable>(
        of type: Payload.Type,
        decoder: JSONDecoder = JSONDecoder(),
        limits: StreamLimits = .standard,
        terminator: String? = nil
    ) -> TypedServerSentEvents<Self, Payload> {
        TypedServerSentEvents(events: serverSentEvents(limits: limits), decoder: decoder, terminator: terminator)
    }
}

/// The Server-Sent Events of a stream of byte chunks; see
/// ``_Concurrency/AsyncSequence/serverSentEvents(limits:lastEventID:)``.
public struct ServerSentEvents<Base: AsyncSequence>: AsyncSequence where Base.Element: Collection<UInt8> {
    /// An event.
    public typealias Element = ServerSentEvent

    let base: Base
    let parser: EventStreamParser

    /// Returns an iterator over the events, which starts pulling chunks when first asked for an event.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(pump: ChunkPump(base: base.makeAsyncIterator(), parser: parser))
    }

    /// Hands out the events of one iteration of the stream.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var pump: ChunkPump<Base.AsyncIterator, EventStreamParser>

        /// The next event, or `nil` once the stream ended (or failed, or threw).
        ///
        /// - Throws: ``CourierError/Code/lineTooLarge``, ``CourierError/Code/eventTooLarge``, what the base sequence
        ///   throws, or `CancellationError` when the task is cancelled before the next chunk is pulled.
        public mutating func next() async throws -> ServerSentEvent? {
            try await pump.next()
        }

        /// The next event, or `nil` once the stream ended, on the caller's actor.
        ///
        /// - Parameter actor: The caller's actor, which the iteration never leaves but to pull a chunk.
        /// - Throws: What ``next()`` throws.
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> ServerSentEvent? {
            try await pump.next(isolation: actor)
        }
    }
}

extension ServerSentEvents: Sendable where Base: Sendable {}

/// The Server-Sent Events of a stream with their data decoded; see
/// ``_Concurrency/AsyncSequence/serverSentEvents(of:decoder:limits:terminator:)``.
public struct TypedServerSentEvents<Base: AsyncSequence, Payload: Decodable & Sendable>: AsyncSequence
where Base.Element: Collection<UInt8> {
    /// An event with its decoded data.
    public typealias Element = TypedServerSentEvent<Payload>

    let events: ServerSentEvents<Base>
    let decoder: JSONDecoder
    let terminator: String?

    /// Returns an iterator over the decoded events.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(events: events.makeAsyncIterator(), decoder: decoder, terminator: terminator)
    }

    /// Hands out the decoded events of one iteration of the stream.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var events: ServerSentEvents<Base>.AsyncIterator
        let decoder: JSONDecoder
        let terminator: String?
        /// How many events the stream dispatched so far.
        var count = 0
        var ended = false

        /// The next event, decoded, or `nil` once the stream ended (or reached the terminator, or threw).
        ///
        /// - Throws: ``CourierError/Code/decodingFailed`` for an event whose data does not decode, and what the
        ///   events throw.
        public mutating func next() async throws -> TypedServerSentEvent<Payload>? {
            guard !ended, let event = try await events.next() else { return nil }
            return try decode(event)
        }

        /// The next event, decoded, or `nil` once the stream ended, on the caller's actor.
        ///
        /// - Parameter actor: The caller's actor, which the iteration never leaves but to pull a chunk.
        /// - Throws: What ``next()`` throws.
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> TypedServerSentEvent<Payload>?
        {
            guard !ended, let event = try await events.next(isolation: actor) else { return nil }
            return try decode(event)
        }

        /// Decodes `event`, or returns `nil` for the terminator.
        private mutating func decode(_ event: ServerSentEvent) throws -> TypedServerSentEvent<Payload>? {
            count += 1
            if let terminator, event.data == terminator {
                ended = true
                return nil
            }
            do {
                let payload = try decoder.decode(Payload.self, from: Data(event.data.utf8))
                return TypedServerSentEvent(id: event.id, type: event.type, data: payload, retry: event.retry)
            } catch {
                ended = true
                throw CourierError(
                    code: .decodingFailed,
                    stage: .parse,
                    message: "the event at index \(count - 1) of the stream (\(Self.describe(event))) is not a "
                        + "valid \(Payload.self): \(DecodingErrorDescription(error))",
                    underlyingError: error
                )
            }
        }

        /// The event's type, ID and size, each shortened: never its data.
        private static func describe(_ event: ServerSentEvent) -> String {
            func quoted(_ text: String) -> String {
                let limit = 64
                return text.count <= limit ? "\"\(text)\"" : "\"\(text.prefix(limit))…\""
            }
            let id = event.id.map(quoted) ?? "none"
            return "type \(quoted(event.type)), id \(id), \(event.data.utf8.count) bytes of data"
        }
    }
}

extension TypedServerSentEvents: Sendable where Base: Sendable {}
