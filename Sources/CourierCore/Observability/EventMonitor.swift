/// Receives a ``CourierEvent`` for each stage of every call a client makes: logging, metrics, tracing, analytics.
///
/// Monitors run **off the request path**. Each monitor of a client has its own bounded buffer (capacity
/// ``Client/Configuration/monitorBufferCapacity``) drained by its own task, so a slow monitor never slows a call:
/// when its buffer is full, new events for that monitor are dropped and counted in
/// ``Client/droppedMonitorEvents``, and the call goes on. A call's last event (``CourierEvent/Kind/finished(status:duration:bytes:)``
/// or ``CourierEvent/Kind/failed(error:status:duration:)``) still gets in until the buffer holds twice its
/// capacity, so a monitor that falls behind misses the middle of calls before their ends, while one that is stuck
/// holds bounded memory. ``handle(_:)`` cannot throw, so a monitor cannot fail a call either.
///
/// Events of one client reach a monitor one at a time, in the order they happened. A monitor given to several
/// clients gets their events concurrently.
///
/// ```swift
/// struct PrintingMonitor: EventMonitor {
///     func handle(_ event: CourierEvent) async { print(event) }
/// }
/// let client = Client(server: server, transport: transport, configuration: .init(monitors: [PrintingMonitor()]))
/// ```
public protocol EventMonitor: Sendable {
    /// Handles one event; called on the monitor's own task, after the stage happened.
    func handle(_ event: CourierEvent) async

    /// Called synchronously on the caller's task as a call starts, before anything else happens to it, with its
    /// ``CourierEvent/Kind/started`` event (which ``handle(_:)`` gets too, later).
    ///
    /// It runs on the request path, so it must return at once: it is for what needs the caller's task, such as
    /// a tracing monitor reading the caller's current span to start the call's span under it. The default does
    /// nothing.
    func callWillStart(_ event: CourierEvent)
}

extension EventMonitor {
    /// Does nothing.
    public func callWillStart(_ event: CourierEvent) {}
}

/// An ``EventMonitor`` made from a closure.
public struct ClosureMonitor: EventMonitor {
    private let body: @Sendable (CourierEvent) async -> Void

    /// Creates a monitor that passes each event to `body`.
    public init(_ body: @escaping @Sendable (CourierEvent) async -> Void) {
        self.body = body
    }

    /// Passes `event` to the closure.
    public func handle(_ event: CourierEvent) async {
        await body(event)
    }
}

extension EventMonitor where Self == ClosureMonitor {
    /// A monitor that passes each event to `body`: `monitors: [.custom { print($0) }]`.
    public static func custom(_ body: @escaping @Sendable (CourierEvent) async -> Void) -> ClosureMonitor {
        ClosureMonitor(body)
    }
}
