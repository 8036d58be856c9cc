import Foundation
import HTTPTypes

/// A value with what the cache did to get it.
public struct CachedResponse<Value: Sendable>: Sendable {
    /// The parsed value.
    public var value: Value
    /// Whether it came from the cache, how old and whether stale; `nil` when the cache was not involved.
    public var cacheStatus: CacheStatus?

    /// Creates a cached response.
    public init(value: Value, cacheStatus: CacheStatus?) {
        self.value = value
        self.cacheStatus = cacheStatus
    }
}

extension Client {
    /// Sends `request` like ``send(_:)`` and also returns its ``CacheStatus``: from the cache or not, its age,
    /// stale or not.
    ///
    /// ```swift
    /// let timeline = try await client.sendWithCacheStatus(GetTimeline())
    /// if timeline.cacheStatus?.isStale == true { showOfflineBanner() }
    /// ```
    ///
    /// For responses parsed from memory; a streaming parser (downloads) is not supported here.
    ///
    /// - Throws: What ``send(_:)`` throws.
    public func sendWithCacheStatus<R: Request>(_ request: R) async throws -> CachedResponse<R.Response> {
        try await send(CacheStatusReporting(base: request))
    }
}

/// `base`, with a parser that also returns the response's cache status.
private struct CacheStatusReporting<Base: Request>: ForwardingRequest {
    typealias Response = CachedResponse<Base.Response>

    let base: Base

    var parser: any ResponseParser<Response> { Parser(base: base.parser) }

    struct Parser: ResponseParser {
        let base: any ResponseParser<Base.Response>

        func parse(_ response: ReceivedResponse, context: ParseContext) throws -> CachedResponse<Base.Response> {
            CachedResponse(value: try base.parse(response, context: context), cacheStatus: response.cacheStatus)
        }
    }
}
