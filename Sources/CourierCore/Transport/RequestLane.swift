/// Which lane a request travels in to its transport.
///
/// A token refresh must not queue behind the calls it is meant to rescue: when a thousand calls are rejected at once
/// and wait for a new token, the token request that renews it goes first. ``priority`` requests skip the client's
/// ``Client/Configuration/maxConcurrentRequests`` queue, and a transport with connection pools sends them on a pool
/// of their own (`AsyncHTTPClientTransport`: a separate `HTTPClient` with the same settings; `URLSessionTransport`: a
/// separate session), so they never wait for a connection the rejected calls hold.
///
/// The OAuth 2.0 token requests Courier sends (``OAuth2RefreshTokenRefresher``, ``OAuth2ClientCredentialsRefresher``)
/// are ``priority``; a request of your own that other calls wait for can be too (``Request/lane``).
public enum RequestLane: Sendable, Hashable {
    /// The usual lane: queued by ``Client/Configuration/maxConcurrentRequests`` and the transport's pool.
    case standard
    /// Ahead of the queue, on a connection of its own.
    case priority
}
