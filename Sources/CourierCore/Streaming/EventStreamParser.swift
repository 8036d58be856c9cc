/// Parses a Server-Sent Events stream (`text/event-stream`) as it arrives, exactly as the WHATWG HTML standard's
/// "Parsing an event stream" and "Interpreting an event stream" say a browser does.
///
/// Feed it the body's chunks in order; it calls back with each event as soon as the blank line that ends it
/// arrives, whatever the chunk boundaries (a CRLF split across two chunks is one line end):
///
/// ```swift
/// var parser = EventStreamParser()
/// for try await chunk in body {
///     try parser.parse(chunk) { event in print(event.type, event.data) }
/// }
/// parser.finish()  // an event without its blank line is dropped, as in a browser
/// ```
///
/// The rules, in short: the bytes are UTF-8 (an invalid sequence becomes U+FFFD) and one byte order mark at the
/// start of the stream is skipped. Lines end with CRLF, LF or CR. A line starting with `:` is a comment. A line is
/// `field: value` (one space after the colon is dropped) or a field name alone with an empty value. `data` appends
/// its value and a line feed to the event's data; `event` sets its type; `id` sets the last event ID unless the
/// value contains U+0000; `retry` sets ``reconnectionTime`` when the value is ASCII digits only; other fields are
/// ignored. A blank line dispatches the event when it has data (dropping the data's last line feed), and otherwise
/// only forgets the event type. The end of the stream drops an unfinished event.
///
/// Parsing is synchronous, works on bytes and builds strings only for the fields it keeps; between chunks it holds
/// the unfinished line and the event's data, within ``StreamLimits``. After it throws, the stream is broken:
/// make a new parser (with the ``lastEventID``) for the next one.
public struct EventStreamParser: Sendable {
    /// The limits on one line and one event's data.
    public let limits: StreamLimits

    /// The last event ID as of the last blank line: what a reconnection sends as `Last-Event-ID`, or `nil` for
    /// none.
    ///
    /// An `id` field sets it when its block ends, whether the block dispatches an event or not; an empty `id`
    /// resets it to `nil`. It carries over ``finish()`` to the next stream, as a browser's `EventSource` keeps it
    /// across reconnections.
    public private(set) var lastEventID: String?

    /// The reconnection time the stream last set with a valid `retry` field, or `nil` while it set none.
    ///
    /// It changes as soon as the field is parsed, even in an event that is never dispatched, and carries over
    /// ``finish()``. A value of more digits than fit an `Int64` is ignored.
    public private(set) var reconnectionTime: Duration?

    /// The bytes of the byte order mark matched at the start of the stream (0 to 2), or `nil` once past it.
    private var byteOrderMarkMatched: Int? = 0
    /// Whether the last chunk ended with a CR, so an LF starting the next one ends nothing.
    private var skipsLineFeed = false
    /// The start of a line whose end has not arrived yet.
    private var line: [UInt8] = []
    /// The data buffer: each `data` value followed by an LF.
    private var data: [UInt8] = []
    /// The event type buffer.
    private var eventType = ""
    /// The last event ID buffer, `nil` for empty.
    private var idBuffer: String?
    /// The reconnection time set by the current block, if any.
    private var blockRetry: Duration?
    /// Whether this stream (since ``finish()``) had an `id` field: the ID buffer then holds its value, not the one
    /// a previous connection left.
    private var idFieldSeen = false

    /// Creates a parser for one stream.
    ///
    /// - Parameters:
    ///   - limits: The limits on one line and one event's data.
    ///   - lastEventID: The last event ID a previous connection left, which events carry until the stream sets
    ///     another; `nil` or empty for none.
    public init(limits: StreamLimits = .standard, lastEventID: String? = nil) {
        self.limits = limits
        self.lastEventID = lastEventID?.isEmpty == false ? lastEventID : nil
        self.idBuffer = self.lastEventID
    }

    /// Parses the next chunk of the stream, calling `emit` with each event it completes, in order.
    ///
    /// - Parameters:
    ///   - bytes: The next bytes of the stream, however they were chunked.
    ///   - emit: Called with each dispatched event; an error it throws stops parsing and is rethrown.
    /// - Throws: ``CourierError/Code/lineTooLarge`` when a line grows past ``StreamLimits/maximumLineLength``,
    ///   ``CourierError/Code/eventTooLarge`` when an event's data grows past ``StreamLimits/maximumEventSize``
    ///   (stage ``CourierError/Stage/parse``, the message naming the limit and the size), or what `emit` throws.
    ///   The events before have been emitted.
    public mutating func parse(_ bytes: some Collection<UInt8>, into emit: (ServerSentEvent) throws -> Void) throws {
        try parse(bytes, markingIDs: { event, _ in try emit(event) })
    }

    /// ``parse(_:into:)``, also telling for each event whether its ``id`` was set by an `id` field of this stream
    /// (since ``finish()``), its own or an earlier event's: `false` when it is the ID a previous connection left,
    /// which a replay check must not take for a repeat.
    mutating func parse(
        _ bytes: some Collection<UInt8>, markingIDs emit: (ServerSentEvent, _ idFromThisStream: Bool) throws -> Void
    ) throws {
        let done: Void? = try bytes.withContiguousStorageIfAvailable { try parse(buffer: $0, emit) }
        if done == nil {
            try Array(bytes).withUnsafeBufferPointer { try parse(buffer: $0, emit) }
        }
    }

    /// Parses the next chunk of the stream and returns the events it completes.
    ///
    /// - Parameter bytes: The next bytes of the stream.
    /// - Returns: The dispatched events, in order.
    /// - Throws: ``CourierError/Code/lineTooLarge`` or ``CourierError/Code/eventTooLarge``, as
    ///   ``parse(_:into:)`` does. The events the chunk completed before the limit are not returned then: to keep
    ///   them, parse with ``parse(_:into:)``, which hands each one out before it throws.
    public mutating func parse(_ bytes: some Collection<UInt8>) throws -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        try parse(bytes) { events.append($0) }
        return events
    }

    /// Ends the stream: drops the unfinished line and event, and readies the parser for the next connection's
    /// stream.
    ///
    /// ``lastEventID`` and ``reconnectionTime`` are kept; an `id` of the dropped event is forgotten. The next
    /// stream may start with a byte order mark again.
    public mutating func finish() {
        byteOrderMarkMatched = 0
        skipsLineFeed = false
        line = []
        data = []
        eventType = ""
        idBuffer = lastEventID
        blockRetry = nil
        idFieldSeen = false
    }

    private mutating func parse(
        buffer: UnsafeBufferPointer<UInt8>, _ emit: (ServerSentEvent, _ idFromThisStream: Bool) throws -> Void
    ) throws {
        guard let base = buffer.baseAddress else { return }
        let end = buffer.count
        var start = 0
        if byteOrderMarkMatched != nil {
            start = skipByteOrderMark(base, end)
        }
        if skipsLineFeed, start < end {
            skipsLineFeed = false
            if base[start] == LineEnds.lineFeed { start += 1 }
        }
        let limit = limits.maximumLineLength
        while start < end {
            let lineEnd = LineEnds.firstLineEnd(in: base, from: start, to: end)
            let piece = UnsafeBufferPointer(start: base + start, count: lineEnd - start)
            let length = line.count + piece.count
            guard lineEnd < end else {
                guard length <= limit else {
                    throw CourierError.lineTooLarge(length: length, exact: false, limit: limit)
                }
                line.append(contentsOf: piece)
                return
            }
            guard length <= limit else { throw CourierError.lineTooLarge(length: length, exact: true, limit: limit) }
            if line.isEmpty {
                try interpret(piece, emit)
            } else {
                var whole: [UInt8] = []
                swap(&whole, &line)
                whole.append(contentsOf: piece)
                try whole.withUnsafeBufferPointer { try interpret($0, emit) }
                whole.removeAll(keepingCapacity: whole.capacity <= LineEnds.retainedCapacity)
                swap(&whole, &line)
            }
            start = lineEnd + 1
            if base[lineEnd] == LineEnds.carriageReturn {
                if start == end {
                    skipsLineFeed = true
                } else if base[start] == LineEnds.lineFeed {
                    start += 1
                }
            }
        }
    }

    /// Skips the byte order mark at the start of the stream; returns where the stream's text starts in `base`.
    ///
    /// A partial match that turns out not to be one is the start of the first line.
    private mutating func skipByteOrderMark(_ base: UnsafePointer<UInt8>, _ end: Int) -> Int {
        let byteOrderMark: (UInt8, UInt8, UInt8) = (0xEF, 0xBB, 0xBF)
        var index = 0
        while let matched = byteOrderMarkMatched, index < end {
            let expected = matched == 0 ? byteOrderMark.0 : matched == 1 ? byteOrderMark.1 : byteOrderMark.2
            guard base[index] == expected else {
                if matched > 0 { line.append(byteOrderMark.0) }
                if matched > 1 { line.append(byteOrderMark.1) }
                byteOrderMarkMatched = nil
                break
            }
            index += 1
            byteOrderMarkMatched = matched == 2 ? nil : matched + 1
        }
        return index
    }

    /// Interprets one line, without its line end.
    private mutating func interpret(
        _ text: UnsafeBufferPointer<UInt8>, _ emit: (ServerSentEvent, _ idFromThisStream: Bool) throws -> Void
    )
        throws
    {
        guard let bytes = text.baseAddress, text.count > 0 else { return try dispatch(emit) }
        let count = text.count
        let colonByte: UInt8 = 0x3A
        if bytes[0] == colonByte { return }  // a comment
        var colon = 0
        while colon < count, bytes[colon] != colonByte { colon += 1 }
        var valueStart = colon + 1
        if valueStart < count, bytes[valueStart] == 0x20 { valueStart += 1 }
        let value = UnsafeBufferPointer(start: bytes + min(valueStart, count), count: max(0, count - valueStart))
        switch colon {
        case 4 where bytes[0] == 0x64 && bytes[1] == 0x61 && bytes[2] == 0x74 && bytes[3] == 0x61:  // data
            let size = data.count + value.count
            guard size <= limits.maximumEventSize else {
                throw CourierError.eventTooLarge(size: size, limit: limits.maximumEventSize)
            }
            data.append(contentsOf: value)
            data.append(LineEnds.lineFeed)
        case 5 where bytes[0] == 0x65 && bytes[1] == 0x76 && bytes[2] == 0x65 && bytes[3] == 0x6E && bytes[4] == 0x74:
            eventType = String(decoding: value, as: UTF8.self)  // event
        case 2 where bytes[0] == 0x69 && bytes[1] == 0x64:  // id
            if !value.contains(0) {
                idBuffer = value.isEmpty ? nil : String(decoding: value, as: UTF8.self)
                idFieldSeen = true
            }
        case 5 where bytes[0] == 0x72 && bytes[1] == 0x65 && bytes[2] == 0x74 && bytes[3] == 0x72 && bytes[4] == 0x79:
            if let milliseconds = Self.milliseconds(value) {  // retry
                reconnectionTime = .milliseconds(milliseconds)
                blockRetry = reconnectionTime
            }
        default:
            break
        }
    }

    /// Dispatches the event on a blank line, when it has data; resets the event either way.
    private mutating func dispatch(_ emit: (ServerSentEvent, _ idFromThisStream: Bool) throws -> Void) throws {
        lastEventID = idBuffer
        guard !data.isEmpty else {
            eventType = ""
            blockRetry = nil
            return
        }
        let text = data.withUnsafeBufferPointer {
            String(decoding: UnsafeBufferPointer(rebasing: $0[0..<($0.count - 1)]), as: UTF8.self)
        }
        let event = ServerSentEvent(
            id: lastEventID, type: eventType.isEmpty ? "message" : eventType, data: text, retry: blockRetry)
        data.removeAll(keepingCapacity: data.capacity <= LineEnds.retainedCapacity)
        eventType = ""
        blockRetry = nil
        try emit(event, idFieldSeen)
    }

    /// The value as a base-ten integer when it is one or more ASCII digits that fit an `Int64`.
    private static func milliseconds(_ value: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard !value.isEmpty else { return nil }
        var result: Int64 = 0
        for byte in value {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            let (shifted, overflowed) = result.multipliedReportingOverflow(by: 10)
            let (sum, overflowedAgain) = shifted.addingReportingOverflow(Int64(byte - 0x30))
            guard !overflowed, !overflowedAgain else { return nil }
            result = sum
        }
        return result
    }
}
