/// A call that is one connection of an event stream (``EventSource``).
protocol StreamConnection {
    /// The stream's ID, shared by its connections (see ``CourierEvent/stream``).
    var stream: CourierEvent.CallID? { get }
}
