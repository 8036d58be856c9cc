import Instrumentation
import Tracing

/// The process-wide tracer these tests bootstrap: it forwards to the tracer bound to the current task by
/// ``RoutingTracer/withTracer(_:operation:)``, and is a no-op everywhere else.
///
/// `InstrumentationSystem.bootstrap` may run once per process, and every test target runs in one process, so the
/// real swift-otel tracer cannot be the global one: it would trace every other suite's HTTP clients. This router is
/// bootstrapped instead (once, see ``bootstrap()``), and routes by a task-local, so only the spans started in a
/// test's own task tree reach that test's OpenTelemetry pipeline. AsyncHTTPClient starts its request span in the
/// calling task with the tracer its `HTTPClient.Configuration` captured from `InstrumentationSystem.tracer` at
/// creation, so a client made after ``bootstrap()`` whose tracing is on reaches the test's exporter too, which the
/// control test proves.
struct RoutingTracer: Tracer {
    @TaskLocal private static var current: (any Tracer)?

    /// Bootstraps `InstrumentationSystem` with the router, once per process (later calls do nothing).
    static func bootstrap() {
        _ = bootstrapOnce
    }

    private static let bootstrapOnce: Void = InstrumentationSystem.bootstrap(RoutingTracer())

    /// Runs `operation` with spans started in its task tree going to `tracer`.
    static func withTracer<Value>(
        _ tracer: any Tracer,
        operation: () async throws -> Value
    ) async rethrows -> Value {
        try await $current.withValue(tracer, operation: operation)
    }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String,
        context: @autoclosure () -> InstrumentationContext,
        ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant,
        function: String,
        file fileID: String,
        line: UInt
    ) -> RoutedSpan {
        guard let tracer = Self.current else {
            return RoutedSpan(NoOpTracer.NoOpSpan(context: context()))
        }
        return RoutedSpan(
            tracer.startSpan(
                operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID,
                line: line))
    }

    /// Does nothing: the tests export by shutting the pipeline down gracefully, which flushes it.
    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(
        _ context: InstrumentationContext,
        into carrier: inout Carrier,
        using injector: Inject
    ) where Carrier == Inject.Carrier {
        Self.current?.inject(context, into: &carrier, using: injector)
    }

    func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier,
        into context: inout InstrumentationContext,
        using extractor: Extract
    ) where Carrier == Extract.Carrier {
        Self.current?.extract(carrier, into: &context, using: extractor)
    }
}

/// A span of whichever tracer ``RoutingTracer`` routed to; every call goes to that tracer's span.
final class RoutedSpan: Span {
    private let base: any Span

    init(_ base: any Span) {
        self.base = base
    }

    var context: InstrumentationContext { base.context }

    var operationName: String {
        get { base.operationName }
        set { base.operationName = newValue }
    }

    var attributes: SpanAttributes {
        get { base.attributes }
        set { base.attributes = newValue }
    }

    var isRecording: Bool { base.isRecording }

    func setStatus(_ status: SpanStatus) { base.setStatus(status) }

    func addEvent(_ event: SpanEvent) { base.addEvent(event) }

    func recordError<Instant: TracerInstant>(
        _ error: any Error,
        attributes: SpanAttributes,
        at instant: @autoclosure () -> Instant
    ) {
        base.recordError(error, attributes: attributes, at: instant())
    }

    func addLink(_ link: SpanLink) { base.addLink(link) }

    func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) { base.end(at: instant()) }
}
