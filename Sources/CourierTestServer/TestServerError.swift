/// Errors thrown by ``TestServer/start(host:port:logger:)``.
public enum TestServerError: Error, Sendable, Equatable {
    /// The host is not a loopback address; the test server never listens anywhere else.
    case nonLoopbackHost(String)
}
