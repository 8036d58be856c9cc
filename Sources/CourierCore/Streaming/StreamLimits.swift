/// The most a streamed body may make Courier hold in memory at once: one line, one event.
///
/// An event stream or a line-delimited stream is parsed as it arrives, so its whole length is never bounded; what
/// a parser buffers is. A line longer than ``maximumLineLength`` fails the stream with
/// ``CourierError/Code/lineTooLarge``; an event whose data is larger than ``maximumEventSize`` fails it with
/// ``CourierError/Code/eventTooLarge``. Both errors name the limit and the size that went past it.
///
/// ```swift
/// let limits = StreamLimits(maximumLineLength: 64 * 1024, maximumEventSize: 1024 * 1024)
/// for try await event in body.serverSentEvents(limits: limits) { print(event.data) }
/// ```
public struct StreamLimits: Hashable, Sendable {
    /// The most bytes one line may have, not counting its line end (8 MiB by default).
    ///
    /// In an event stream a line counts its field name: `data: ` and the value. A line still arriving is
    /// refused as soon as it grows past the limit, before its end is seen.
    public var maximumLineLength: Int

    /// The most bytes of data one server-sent event may carry: its `data` lines joined by line feeds, in UTF-8
    /// (8 MiB by default). Line-delimited streams ignore it.
    public var maximumEventSize: Int

    /// Creates limits; a negative value counts as zero.
    ///
    /// - Parameters:
    ///   - maximumLineLength: The most bytes one line may have, not counting its line end.
    ///   - maximumEventSize: The most bytes of data one server-sent event may carry.
    public init(maximumLineLength: Int = 8 << 20, maximumEventSize: Int = 8 << 20) {
        self.maximumLineLength = max(0, maximumLineLength)
        self.maximumEventSize = max(0, maximumEventSize)
    }

    /// 8 MiB per line and per event.
    public static let standard = StreamLimits()
}

extension CourierError {
    /// A line longer than ``StreamLimits/maximumLineLength``; `exact` says whether its whole length is known.
    static func lineTooLarge(length: Int, exact: Bool, limit: Int) -> CourierError {
        let size = exact ? "\(length) bytes" : "at least \(length) bytes so far"
        return CourierError(
            code: .lineTooLarge,
            stage: .parse,
            message: "a line of the stream has \(size), more than maximumLineLength (\(limit) bytes)"
        )
    }

    /// An event whose data is larger than ``StreamLimits/maximumEventSize``.
    static func eventTooLarge(size: Int, limit: Int) -> CourierError {
        CourierError(
            code: .eventTooLarge,
            stage: .parse,
            message: "an event's data has at least \(size) bytes, more than maximumEventSize (\(limit) bytes)"
        )
    }
}
