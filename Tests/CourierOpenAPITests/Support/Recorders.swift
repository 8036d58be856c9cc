import Courier
import CourierCore
import Foundation
import Logging

/// Keeps every event of the client's calls; ``untilCallsEnded(_:)`` waits for the last event of that many calls.
///
/// It hands each event to `monitors` first, so once it has an event, they have handled it too.
final class EventCapture: EventMonitor {
    private let stream: AsyncStream<CourierEvent>
    private let continuation: AsyncStream<CourierEvent>.Continuation
    private let monitors: [any EventMonitor]

    init(forwardingTo monitors: [any EventMonitor] = []) {
        (stream, continuation) = AsyncStream.makeStream()
        self.monitors = monitors
    }

    func handle(_ event: CourierEvent) async {
        for monitor in monitors { await monitor.handle(event) }
        continuation.yield(event)
    }

    func callWillStart(_ event: CourierEvent) {
        for monitor in monitors { monitor.callWillStart(event) }
    }

    /// The events until `calls` calls have finished or failed, in the order they arrived.
    func untilCallsEnded(_ calls: Int = 1) async -> [CourierEvent] {
        var events: [CourierEvent] = []
        var ended = 0
        for await event in stream {
            events.append(event)
            switch event.kind {
            case .finished, .failed:
                ended += 1
                if ended == calls { return events }
            default:
                continue
            }
        }
        return events
    }

    /// Waits for the first event of `kind`'s case, such as `sent`.
    func until(_ matches: (CourierEvent.Kind) -> Bool) async -> CourierEvent? {
        for await event in stream where matches(event.kind) { return event }
        return nil
    }
}

/// Keeps every log line with its metadata.
final class LogCapture: Sendable {
    private let lines = LockedBox<[String]>([])

    var allText: [String] { lines.withLock { $0 } }

    func logger(level: Logger.Level = .debug) -> Logger {
        var logger = Logger(label: "courier.openapi.tests") { _ in Handler(capture: self) }
        logger.logLevel = level
        return logger
    }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
            capture.lines.withLock { $0.append("\(event.message) \(merged)") }
        }
    }
}
