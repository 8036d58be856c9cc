import Courier
import CourierTesting
import Foundation
import HTTPTypes
import InMemoryTracing
import Logging
import Tracing

/// A value shared between a test and the closures it hands to Courier.
final class Shared<Value: Sendable>: Sendable {
    private let box: LockedBox<Value>

    init(_ value: Value) { box = LockedBox(value) }

    var value: Value { box.withLock { $0 } }

    @discardableResult
    func update<Result: Sendable>(_ body: @Sendable (inout Value) -> Result) -> Result {
        box.withLock { body(&$0) }
    }
}

/// Keeps every event (after passing it to `inner`, if any); a test awaits the end of the calls it made, and so
/// knows `inner` has seen them too.
final class RecordingMonitor: EventMonitor {
    private let shared = Shared<[CourierEvent]>([])
    private let stream: AsyncStream<CourierEvent>
    private let continuation: AsyncStream<CourierEvent>.Continuation
    private let inner: (any EventMonitor)?

    init(forwardingTo inner: (any EventMonitor)? = nil) {
        self.inner = inner
        (stream, continuation) = AsyncStream.makeStream()
    }

    var events: [CourierEvent] { shared.value }

    func handle(_ event: CourierEvent) async {
        await inner?.handle(event)
        shared.update { $0.append(event) }
        continuation.yield(event)
    }

    func callWillStart(_ event: CourierEvent) {
        inner?.callWillStart(event)
    }

    /// Waits until an event stream has reported its end. One waiter at a time.
    func waitForStreamEnd() async {
        for await event in stream {
            if case .streamEnded = event.kind { return }
        }
    }

    /// Waits until `count` calls have finished or failed. One waiter at a time.
    func waitForCalls(_ count: Int) async {
        var ended = 0
        for await event in stream {
            switch event.kind {
            case .finished, .failed: ended += 1
            default: break
            }
            if ended == count { return }
        }
    }
}

/// Every line logged, with its metadata.
final class LogCapture: Sendable {
    private let lines = Shared<[String]>([])

    var allText: [String] { lines.value }

    func logger(level: Logger.Level) -> Logger {
        var logger = Logger(label: "courier.observability.tests") { _ in Handler(capture: self) }
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
            capture.lines.update { $0.append("\(event.level) \(event.message) \(merged) \(event.source)") }
        }
    }
}

/// An in-memory tracer whose IDs and injected context are W3C Trace Context: `traceparent:
/// 00-<32 hex trace ID>-<16 hex span ID>-01`.
struct W3CTestTracer: Tracer {
    let inner: InMemoryTracer

    init() {
        let counter = Shared<UInt64>(0)
        let next: @Sendable (Int) -> String = { width in
            let value = counter.update {
                $0 += 1
                return $0
            }
            let hex = String(value, radix: 16)
            return String(repeating: "0", count: width - hex.count) + hex
        }
        inner = InMemoryTracer(
            idGenerator: .init(nextTraceID: { "4bf92f35" + next(24) }, nextSpanID: { "00f0" + next(12) }))
    }

    var finishedSpans: [FinishedInMemorySpan] { inner.finishedSpans }
    var activeSpans: [InMemorySpan] { inner.activeSpans }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String,
        context: @autoclosure () -> InstrumentationContext,
        ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant,
        function: String,
        file fileID: String,
        line: UInt
    ) -> InMemorySpan {
        inner.startSpan(
            operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID,
            line: line)
    }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(
        _ context: InstrumentationContext,
        into carrier: inout Carrier,
        using injector: Inject
    ) where Carrier == Inject.Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier,
        into context: inout InstrumentationContext,
        using extractor: Extract
    ) where Carrier == Extract.Carrier {}
}

extension FinishedInMemorySpan {
    /// Every string the span holds: name, attributes, events, errors.
    var allText: [String] {
        var texts = [operationName, "\(attributes)", "\(status.map { "\($0)" } ?? "")"]
        texts += events.map { "\($0.name) \($0.attributes)" }
        texts += errors.map { "\($0.error) \(($0.error as NSError).localizedDescription) \($0.attributes)" }
        return texts
    }
}

/// A request with a typed response, for tests.
struct Call: Request {
    typealias Response = String
    var method: HTTPRequest.Method = .get
    var path: String = "/probe"
    var query: Parameters? = nil
    var headers: RequestHeaders = [:]
    var body: RequestBody? = nil
    var extraAdapters: [any RequestAdapter] = []
    var timeout: Duration? = nil
    var adapters: [any RequestAdapter] { standardAdapters + extraAdapters }
}

extension Collection {
    /// The only element, or `nil` when there are none or several.
    var onlyElement: Element? { count == 1 ? first : nil }
}

/// Whether `value` is a W3C `traceparent` (version 00, sampled).
func isTraceparent(_ value: String?) -> Bool {
    guard let value else { return false }
    return value.wholeMatch(of: #/00-[0-9a-f]{32}-[0-9a-f]{16}-01/#) != nil
}

/// An error of the test's own.
struct Boom: Error {}
