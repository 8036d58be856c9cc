import Foundation
import HTTPTypes

/// Step 4 of a call (design §1): the cache and in-flight de-duplication around the transport.
///
/// The pipeline calls ``send(_:context:over:)`` instead of the transport. A fresh entry is answered without the
/// network; a stale one is revalidated and a `304` merged; a storable response is read into memory and stored (a
/// streamed one is stored when its reader reaches the end: ``CachingBody``); an unsafe method's success
/// invalidates. Afterwards ``status`` says what happened, for the trace and for ``ReceivedResponse/cacheStatus``. One stage per call; attempts reuse it.
struct CacheStage: Sendable {
    let cache: HTTPCache?
    let policy: CachePolicy
    let inflight: InflightRequests?
    /// Whether the call reads the body as it arrives: a storable response then goes on streaming, and is stored
    /// when its reader reaches the end within ``HTTPCache/maxStreamedBodySize``.
    let streams: Bool
    /// What the cache did in the last send, and whether it stored the response; `nil` without a cache, so a
    /// client with no cache pays nothing for this stage.
    private let record: LockedBox<Record>?

    private struct Record {
        var status: CacheStatus?
        var stored = false
        /// The request headers that carry credentials besides `Authorization` (the client's ``Redactor``'s
        /// sensitive headers): a request without `Authorization` is partitioned by their values (``CacheKey``).
        /// Kept here rather than in the stage, whose size every call's frames pay for (issue #17).
        let credentialHeaders: Set<HTTPField.Name>
        /// The client's redactor, whose words name more credential headers (``credentialHeaders(in:)``).
        let redactor: Redactor
        /// Whether the call's retry policy sends a request again after `connectionReset` (see
        /// ``isStaleConnection(_:_:)``).
        let retriesResets: Bool
    }

    init(
        cache: HTTPCache?, policy: CachePolicy, inflight: InflightRequests?, streams: Bool = false,
        credentialHeaders: Set<HTTPField.Name> = Redactor.defaultSensitiveHeaderNames, redactor: Redactor? = nil,
        retriesResets: Bool = false
    ) {
        self.cache = cache
        self.policy = policy
        self.inflight = inflight
        self.streams = streams
        self.record =
            cache == nil
            ? nil
            : LockedBox(
                Record(
                    credentialHeaders: credentialHeaders, redactor: redactor ?? .default, retriesResets: retriesResets))
    }

    /// The request headers other than `Authorization` that partition the cache.
    private var credentialHeaders: Set<HTTPField.Name> { record?.withLock { $0.credentialHeaders } ?? [] }

    /// ``credentialHeaders`` and the headers among `fields` that the client's redactor finds sensitive by a word
    /// of their name (`X-Vault-Token`): one user's answer to such a request is not another's.
    private func credentialHeaders(in fields: HTTPFields) -> Set<HTTPField.Name> {
        guard let (names, redactor) = record?.withLock({ ($0.credentialHeaders, $0.redactor) }) else { return [] }
        var found = names
        for field in fields where !found.contains(field.name) && redactor.hasSensitiveWord(field.name.canonicalName) {
            found.insert(field.name)
        }
        return found
    }

    /// The stage of a call of `client` and a request with `policy`. A streamed body is not shared between
    /// concurrent calls (each reads its own stream), but it is cached.
    init(client: Client, policy: CachePolicy, streamsBody: Bool, retryPolicy: RetryPolicy? = nil) {
        let cache = client.configuration.cache
        self.init(
            cache: cache,
            policy: policy,
            inflight: client.configuration.deduplicatesRequests && !streamsBody ? client.configuration.inflight : nil,
            streams: streamsBody,
            // Read only for a client with a cache: every call builds a stage.
            credentialHeaders: cache == nil ? [] : client.configuration.redactor.sensitiveHeaderNames,
            redactor: cache == nil ? nil : client.configuration.redactor,
            retriesResets: retryPolicy.map(Self.retriesResets) ?? false
        )
    }

    /// Whether `policy` sends a GET again after `connectionReset`. Only a policy whose answer is known here: one with
    /// an `errorCondition` decides per call, and the offline fallback then stays as it was.
    private static func retriesResets(_ policy: RetryPolicy) -> Bool {
        policy.maxRetries > 0 && policy.retriesTransportFailures && policy.errorCondition == nil
            && policy.retryableErrors.contains(.connectionReset) && policy.retryableMethods.contains(.get)
    }

    /// Whether ``send(_:context:over:)`` would only call the transport (no cache, no shared transfers): the pipeline
    /// then calls the transport itself, sparing every call this stage's async frame (several KiB, issue #17).
    /// A `.cacheOnly` request is never passed through: without a cache it is a miss.
    var isPassThrough: Bool { cache == nil && inflight == nil && policy != .cacheOnly }

    /// What the cache did in the last ``send(_:context:over:)``; `nil` when it was not involved.
    var status: CacheStatus? { record?.withLock { $0.status } }

    /// Reports what the cache did in the last send to the call's monitors: its outcome, and `stored`.
    func report(to events: CallEvents?, attempt: Int) {
        guard let events, let status else { return }
        let kind: CourierEvent.CacheOutcome =
            switch status.outcome {
            case .miss: .miss
            case .hit: .hit
            case .revalidated: .revalidated
            case .stale: .stale
            }
        events.emit(.cached(kind), attempt: attempt)
        if record?.withLock({ $0.stored }) == true { events.emit(.cached(.stored), attempt: attempt) }
    }

    /// Sends `request` through the cache and the transport.
    ///
    /// The lookup, the invalidation and the handling of the response run in functions of their own: this function
    /// and ``fetch(_:stored:key:requestControl:generation:cache:context:over:)`` are what a call waiting for its answer keeps,
    /// and an async function keeps every local that crosses any of its `await`s (issue #17: 8.7 and 9.3 KB per call
    /// in flight before, measured with `Benchmarks/async-frames`).
    func send(
        _ request: OutgoingRequest,
        context: TransportContext,
        over transport: any Transport
    ) async throws -> TransportResponse {
        record?.withLock {
            $0.status = nil
            $0.stored = false
        }
        guard let cache, let url = request.head.url else {
            if policy == .cacheOnly { throw Self.mayNotUseNetwork(request, because: "the client has no cache") }
            let response = try await network(request, context: context, over: transport)
            if let inflight, let url = request.head.url, !CacheRules.isSafe(request.head.method),
                (200..<400).contains(response.head.status.code)
            {
                inflight.noteWrite(CacheRules.invalidatedURLs(request: url, response: response.head))
            }
            return response
        }
        // An unsafe method invalidates what it changes whatever the policy (RFC 9111 §4.4): `.bypass` is about
        // reading and storing, not about keeping entries the request made stale.
        if !CacheRules.isSafe(request.head.method) {
            if policy == .cacheOnly || CacheControl(request.head.headerFields).onlyIfCached {
                throw Self.mayNotUseNetwork(request, because: "the cache never answers a \(request.head.method)")
            }
            return try await sendUnsafe(request, url: url, cache: cache, context: context, over: transport)
        }
        guard policy != .bypass else {
            return try await network(request, context: context, over: transport)
        }
        switch try await lookUp(request, url: url, cache: cache, context: context, over: transport) {
        case .answer(let response):
            return response
        case .network:
            return try await network(request, context: context, over: transport)
        case .fetch(let lookup):
            return try await fetch(
                request, stored: lookup.stored, key: lookup.key, requestControl: lookup.requestControl,
                generation: lookup.generation, cache: cache, context: context, over: transport)
        }
    }

    /// What the cache makes of a safe request.
    private enum Lookup {
        /// The cache answers (a fresh or usable stale entry).
        case answer(TransportResponse)
        /// The request is not the cache's (a conditional or ranged request, `no-store`, no key).
        case network
        /// Fetch it, conditional on the stored entry when there is one.
        case fetch(Fetch)
    }

    /// A fetch's inputs, boxed: ``Lookup`` stays one pointer in ``send(_:context:over:)``'s frame. One allocation per
    /// fetch buys 768 bytes less in the frame a waiting call keeps (`send`: 3,440 instead of 4,208 bytes with the
    /// values inline in the enum) and 2.2 KB less in `lookUp`'s (7,552 instead of 9,776), per `Benchmarks/async-frames`.
    private final class Fetch: Sendable {
        let stored: CacheEntry?
        let key: CacheKey
        let requestControl: CacheControl
        /// The cache's removal count before the lookup (see ``HTTPCache/removalCount``).
        let generation: UInt64

        init(stored: CacheEntry?, key: CacheKey, requestControl: CacheControl, generation: UInt64) {
            self.stored = stored
            self.key = key
            self.generation = generation
            self.requestControl = requestControl
        }
    }

    /// An unsafe method: sent, and its success invalidates the entries it names (RFC 9111 §4.4).
    @inline(never)
    private func sendUnsafe(
        _ request: OutgoingRequest,
        url: URL,
        cache: HTTPCache,
        context: TransportContext,
        over transport: any Transport
    ) async throws -> TransportResponse {
        let response = try await network(request, context: context, over: transport)
        if (200..<400).contains(response.head.status.code) {
            let targets = CacheRules.invalidatedURLs(request: url, response: response.head)
            inflight?.noteWrite(targets)
            for target in targets {
                await cache.discard(.url(target))
            }
        }
        return response
    }

    /// Looks `request` up: the answer from the cache, or what to fetch.
    @inline(never)
    private func lookUp(
        _ request: OutgoingRequest,
        url: URL,
        cache: HTTPCache,
        context: TransportContext,
        over transport: any Transport
    ) async throws -> Lookup {
        let fields = request.head.headerFields
        let requestControl = CacheControl(fields)
        let credentials = credentialHeaders(in: fields)
        guard request.head.method == .get, request.body == nil, !requestControl.noStore,
            fields[.ifNoneMatch] == nil, fields[.ifModifiedSince] == nil, fields[.range] == nil,
            let key = CacheKey(
                request.head, partitionKey: cache.store.partitionKey, credentialHeaders: credentials)
        else {
            // Not a request the cache answers; one that may not use the network fails here (RFC 9111 §5.2.1.7: a
            // cache that honours only-if-cached answers from storage or not at all).
            if policy == .cacheOnly || requestControl.onlyIfCached {
                throw Self.mayNotUseNetwork(
                    request,
                    because: "the cache answers only a plain GET: no body, Range, If-None-Match, If-Modified-Since "
                        + "or no-store")
            }
            return .network
        }
        // Read before the lookup: a removal after it (a sign-out, a purge) keeps out of the cache both a response
        // fetched for this call and the entry found, which a 304 would otherwise merge and store again.
        let generation = cache.removalCount
        let stored =
            policy == .reloadIgnoringCache
            ? nil
            : await cache.lookUp(key).flatMap { found -> CacheEntry? in
                // An entry whose headers say no-store is never reused (RFC 9111 §3), whoever kept it.
                guard !found.control.noStore,
                    found.matches(fields, credentials: credentials, key: cache.store.partitionKey)
                else { return nil }
                return found
            }
        let now = cache.now()
        if let stored {
            let age = stored.age(at: now)
            let lifetime = stored.freshnessLifetime
            if policy == .returnCacheElseLoad || policy == .cacheOnly {
                return .answer(serve(stored, age: age, as: age < lifetime ? .hit : .stale))
            }
            if !stored.control.noCache, !requestControl.noCache {
                var fresh = age + TimeInterval(requestControl.minFresh ?? 0) < lifetime
                if let maxAge = requestControl.maxAge, age > TimeInterval(maxAge) { fresh = false }
                if fresh { return .answer(serve(stored, age: age, as: .hit)) }
                let staleness = age - lifetime
                if !stored.control.mustRevalidate {
                    // max-stale tolerates staleness; the request's own max-age and min-fresh still hold (RFC 9111
                    // §5.2.1.1, §5.2.1.3): an entry older than its max-age goes to the network with or without it.
                    if let maxStale = requestControl.maxStale,
                        maxStale == Int.max || staleness <= TimeInterval(maxStale), requestControl.minFresh == nil,
                        requestControl.maxAge.map({ age <= TimeInterval($0) }) ?? true
                    {
                        return .answer(serve(stored, age: age, as: .stale))
                    }
                    // The server's leniency for a stale entry, not for one the request finds too old: a request's
                    // own max-age or min-fresh (a forced reload sends max-age=0) goes to the network.
                    if let window = stored.control.staleWhileRevalidate, staleness >= 0,
                        staleness <= TimeInterval(window), requestControl.minFresh == nil,
                        requestControl.maxAge.map({ age <= TimeInterval($0) }) ?? true
                    {
                        // A request that may not use the network (only-if-cached, RFC 9111 §5.2.1.7) gets the stale
                        // entry without the revalidation, which would go to the network for it.
                        if !requestControl.onlyIfCached {
                            revalidateInBackground(
                                request, stored: stored, key: key, generation: generation, cache: cache,
                                context: context, over: transport)
                        }
                        return .answer(serve(stored, age: age, as: .stale))
                    }
                }
            }
        }
        if policy == .cacheOnly || requestControl.onlyIfCached {
            throw Self.mayNotUseNetwork(request, because: nil)
        }
        return .fetch(Fetch(stored: stored, key: key, requestControl: requestControl, generation: generation))
    }

    /// The ``CourierError/Code/cacheMiss`` of a request that may not use the network (``CachePolicy/cacheOnly``, or
    /// `Cache-Control: only-if-cached`) and that the cache cannot answer, with `reason` when it is not a plain miss.
    @inline(never)
    private static func mayNotUseNetwork(_ request: OutgoingRequest, because reason: String?) -> CourierError {
        let target = request.head.url.map { Redactor.default.displayURL($0) } ?? (request.head.path ?? "/")
        return CourierError(
            code: .cacheMiss,
            stage: .cache,
            message: "the cache has no usable response for \(request.head.method) \(target)"
                + (reason.map { " (\($0))" } ?? "") + " and may not use the network"
        )
    }

    /// Sends `request` (conditional on `stored`), then merges a 304, falls back to `stored` when allowed, or
    /// stores the response.
    private func fetch(
        _ request: OutgoingRequest,
        stored: CacheEntry?,
        key: CacheKey,
        requestControl: CacheControl,
        generation: UInt64,
        cache: HTTPCache,
        context: TransportContext,
        over transport: any Transport
    ) async throws -> TransportResponse {
        var outgoing = request
        if let stored {
            if let eTag = stored.eTag { outgoing.head.headerFields[.ifNoneMatch] = eTag }
            if let lastModified = stored.lastModifiedText {
                outgoing.head.headerFields[.ifModifiedSince] = lastModified
            }
        }
        let requestTime = cache.now()
        // A removal since the lookup (a sign-out, a purge, an invalidation) keeps this response out of the cache.
        var generation = generation
        let response: TransportResponse
        do {
            (response, generation) = try await network(
                outgoing, generation: generation, cache: cache, context: context, over: transport)
        } catch {
            if let stored, !(error is CancellationError), !Task.isCancelled,
                canServeStale(stored, at: cache.now(), networkFailed: !isStaleConnection(error, context), cache: cache)
            {
                return serve(stored, age: stored.age(at: cache.now()), as: .stale)
            }
            throw error
        }
        if let stored, response.head.status.code == 304, !stored.isIdentified(by: response.head) {
            return try await refetch(
                request, replacing: key, requestControl: requestControl, cache: cache, context: context,
                over: transport, after: response)
        }
        return try await store(
            response, request: request, stored: stored, key: key, requestControl: requestControl, cache: cache,
            context: context, requestTime: requestTime, generation: generation)
    }

    /// After a 304 whose validator is not the stored entry's (RFC 9111 §4.3.4: it must not update it), the entry is
    /// not the representation the server has: it is discarded, and `request` is sent again without conditions, its
    /// response stored as any other. A second request, rather than the caller seeing a 304 for a request it did not
    /// make conditional.
    @inline(never)
    private func refetch(
        _ request: OutgoingRequest,
        replacing key: CacheKey,
        requestControl: CacheControl,
        cache: HTTPCache,
        context: TransportContext,
        over transport: any Transport,
        after notModified: TransportResponse
    ) async throws -> TransportResponse {
        _ = try? await notModified.body.collect(upTo: context.maxResponseBodySize)
        await cache.discard(.key(key))
        let requestTime = cache.now()
        let (response, generation) = try await network(
            request, generation: cache.removalCount, cache: cache, context: context, over: transport)
        return try await store(
            response, request: request, stored: nil, key: key, requestControl: requestControl, cache: cache,
            context: context, requestTime: requestTime, generation: generation)
    }

    /// Merges a 304 (and keeps the merged entry when it may still be stored), falls back to `stored` on a 5xx when
    /// allowed, or stores the response (a streamed one when its reader reaches the end). A function of its own: its
    /// locals are not in ``fetch(_:stored:key:requestControl:generation:cache:context:over:)``'s frame while that waits for the
    /// network.
    @inline(never)
    private func store(
        _ response: TransportResponse,
        request: OutgoingRequest,
        stored: CacheEntry?,
        key: CacheKey,
        requestControl: CacheControl,
        cache: HTTPCache,
        context: TransportContext,
        requestTime: Date,
        generation: UInt64
    ) async throws -> TransportResponse {
        let responseTime = cache.now()
        let code = response.head.status.code
        if let stored, code == 304 {
            // Read the (empty) body to its end so the transport can reuse the connection.
            _ = try? await response.body.collect(upTo: context.maxResponseBodySize)
            let merged = stored.merging(response.head, requestTime: requestTime, responseTime: responseTime)
            // The merged head decides whether the entry may still be kept (RFC 9111 §3): a 304 that says no-store
            // answers this call, and the entry goes.
            if CacheRules.isStorable(merged.response, requestControl: requestControl) {
                await cache.keep(merged, ifNoRemovalSince: generation)
            } else {
                await cache.discard(.key(key))
            }
            return serve(merged, age: merged.age(at: responseTime), as: .revalidated)
        }
        if let stored, (500...504).contains(code),
            canServeStale(stored, at: responseTime, networkFailed: false, cache: cache)
        {
            _ = try? await response.body.collect(upTo: context.maxResponseBodySize)
            return serve(stored, age: stored.age(at: responseTime), as: .stale)
        }
        record?.withLock { $0.status = CacheStatus(outcome: .miss) }
        guard CacheRules.isStorable(response.head, requestControl: requestControl) else {
            // A new representation the cache may not keep replaces the stored one; a server error, a 408 or a 429
            // says nothing about it (RFC 9111 §4.3.3), and the entry stays for a later revalidation or offline use.
            // A reload looked nothing up, but what it replaces may be stored all the same.
            if stored != nil || policy == .reloadIgnoringCache, !(500...599).contains(code), code != 408, code != 429 {
                await cache.discard(.key(key))
            }
            return response
        }
        // A credential the response varies on is kept as a digest (CacheEntry.vary): never in a store in the clear.
        let (credentials, partitionKey) = (credentialHeaders(in: request.head.headerFields), cache.store.partitionKey)
        let vary = CacheRules.varyNames(response.head.headerFields).map {
            (
                $0,
                CacheEntry.varyValue(
                    of: $0, in: request.head.headerFields, credentials: credentials, key: partitionKey)
            )
        }
        let entry = { @Sendable (body: Data) in
            CacheEntry(
                key: key,
                status: code,
                headers: CacheRules.storedFields(of: response.head),
                body: body,
                requestTime: requestTime,
                responseTime: responseTime,
                vary: Dictionary(vary, uniquingKeysWith: { first, _ in first })
            )
        }
        if streams {
            let head = response.head
            let limit = min(cache.maxStreamedBodySize, context.maxResponseBodySize)
            // An event stream is a live feed, not a representation to serve again; a body announced over the limit
            // could never be stored, so it is not copied.
            let isEventStream = head.headerFields[.contentType].map(CacheRules.isEventStream) ?? false
            if isEventStream || (response.body.length.knownCount.map { $0 > Int64(limit) } ?? false) {
                if stored != nil || policy == .reloadIgnoringCache { await cache.discard(.key(key)) }
                return response
            }
            let body = CachingBody(response.body, limit: limit, expected: response.body.length.knownCount) { body in
                guard CacheRules.isComplete(body, response: head) else { return }
                await cache.keep(entry(body), ifNoRemovalSince: generation)
            }
            return TransportResponse(
                head: response.head,
                body: MessageBody(body, length: response.body.length, iterationBehavior: .single))
        }
        // A body cut short throws here (nothing is stored) and fails the call as it would without a cache; that of a
        // response that is not a success fails when the pipeline reads it, which keeps its status for the decisions.
        let body: Data
        do {
            body = try await BodyReader.read(response, for: request.head.method, limit: context.maxResponseBodySize)
        } catch let error as CourierError where BodyReader.keepsStatus(of: response.head, after: error) {
            return TransportResponse(head: response.head, body: BodyReader.failing(error))
        }
        // `stored` only when the entry is in the store: not when a removal came first, or the store refused it.
        if CacheRules.isComplete(body, response: response.head),
            await cache.keep(entry(body), ifNoRemovalSince: generation)
        {
            record?.withLock { $0.stored = true }
        }
        return TransportResponse(head: response.head, body: MessageBody(body))
    }

    /// Whether `error` is a reset on a call's first attempt, which the call's retry policy sends again: most often a
    /// keep-alive connection the server had closed, retried at once on a new one. Not "offline": serving the stored
    /// response then would show old data (and an offline banner) while the network is fine. A reset on a later
    /// attempt, or one no retry follows, is.
    private func isStaleConnection(_ error: any Error, _ context: TransportContext) -> Bool {
        context.attempt == 1 && (error as? CourierError)?.code == .connectionReset
            && record?.withLock { $0.retriesResets } == true
    }

    /// Whether `stored` may be served stale because the origin failed (RFC 5861 `stale-if-error`; offline).
    private func canServeStale(_ stored: CacheEntry, at now: Date, networkFailed: Bool, cache: HTTPCache) -> Bool {
        // must-revalidate and no-cache: an error, never unvalidated data (RFC 9111 §5.2.2.2, §5.2.2.4).
        guard !stored.control.mustRevalidate, !stored.control.noCache else { return false }
        if let window = stored.control.staleIfError,
            stored.age(at: now) - stored.freshnessLifetime <= TimeInterval(window)
        {
            return true
        }
        return networkFailed && cache.servesStaleWhenOffline
    }

    private func serve(_ entry: CacheEntry, age: TimeInterval, as kind: CacheStatus.Outcome) -> TransportResponse {
        var head = entry.response
        head.headerFields[.age] = String(Int(age.rounded(.down)))
        record?.withLock {
            $0.status = CacheStatus(outcome: kind, age: .milliseconds(Int64((age * 1000).rounded(.down))))
        }
        return TransportResponse(head: head, body: MessageBody(entry.body))
    }

    /// RFC 5861 `stale-while-revalidate`: the caller gets the stale entry; this revalidates it meanwhile.
    private func revalidateInBackground(
        _ request: OutgoingRequest,
        stored: CacheEntry,
        key: CacheKey,
        generation: UInt64,
        cache: HTTPCache,
        context: TransportContext,
        over transport: any Transport
    ) {
        // A streamed call's revalidation streams too: its copy is bounded like the call's own, never read whole.
        let stage = CacheStage(
            cache: cache, policy: .useProtocolRules, inflight: inflight, streams: streams,
            credentialHeaders: credentialHeaders, redactor: record?.withLock { $0.redactor })
        // The call's TLS, proxy and limits, without its deadline: the revalidation outlives the call.
        var context = context
        context.deadlineMoment = nil
        cache.revalidateInBackground(key) { [context] in
            if let response = try? await stage.fetch(
                request, stored: stored, key: key, requestControl: CacheControl(request.head.headerFields),
                generation: generation, cache: cache, context: context, over: transport)
            {
                do {
                    for try await _ in response.body {}
                } catch {}
            }
        }
    }

    private func network(
        _ request: OutgoingRequest,
        context: TransportContext,
        over transport: any Transport
    ) async throws -> TransportResponse {
        if let inflight, InflightRequests.canShare(request) {
            return try await inflight.send(request, context: context, over: transport)
        }
        return try await transport.send(request, context: context)
    }

    /// ``network(_:context:over:)`` for a response `cache` may store: with the removal count its transfer started
    /// at, which is the count of the call that started a shared transfer, when this one joined it. A transfer that
    /// another cache (or a call that stores nothing) started gives `.max`, past any removal count: nothing is
    /// stored from it.
    private func network(
        _ request: OutgoingRequest,
        generation: UInt64,
        cache: HTTPCache,
        context: TransportContext,
        over transport: any Transport
    ) async throws -> (TransportResponse, UInt64) {
        guard let inflight, InflightRequests.canShare(request) else {
            return (try await transport.send(request, context: context), generation)
        }
        let own = InflightRequests.Mark(cache: ObjectIdentifier(cache), removals: generation)
        let (response, mark) = try await inflight.send(request, mark: own, context: context, over: transport)
        guard let mark, mark.cache == own.cache else { return (response, .max) }
        return (response, mark.removals)
    }
}
