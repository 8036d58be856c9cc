/// How one request uses the client's ``HTTPCache`` (with URLSession's choices).
///
/// Set it on a request with the ``Request/cachePolicy`` property; it has no effect when the client has no cache.
///
/// ```swift
/// struct Timeline: Request {
///     typealias Response = [Post]
///     var path: String { "/timeline" }
///     var cachePolicy: CachePolicy { .returnCacheElseLoad }
/// }
/// ```
public enum CachePolicy: Hashable, Sendable {
    /// RFC 9111: serve a fresh entry, revalidate a stale one, store what may be stored. The default.
    case useProtocolRules
    /// Go to the network whatever is stored (no validators), then store the response if it may be stored; one that
    /// may not be stored (`no-store`, `Vary: *`, a `403`) removes the entry it replaces, as a revalidation would.
    case reloadIgnoringCache
    /// Serve any stored entry, fresh or stale (marked stale), without validating it; load when there is none.
    case returnCacheElseLoad
    /// Serve any stored entry, fresh or stale; never use the network. A miss fails with
    /// ``CourierError/Code/cacheMiss``, and so does a request the cache never answers (a `HEAD`, a `Range` or
    /// conditional request, `no-store`, an unsafe method) and any request of a client without a cache.
    case cacheOnly
    /// Neither read nor write the cache, for responses that must never be kept (token endpoints).
    case bypass
}
