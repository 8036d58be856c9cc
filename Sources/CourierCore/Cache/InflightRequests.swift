import Foundation
import HTTPTypes

/// In-flight de-duplication: identical idempotent requests sent at the same time share one transfer (Moya's
/// `trackInflights`, for async/await).
///
/// Only GET and HEAD requests without a body are shared, keyed by method, URL and every header field but the
/// per-call tracing ones (so requests signed by different credentials, or asking for different variants, never
/// share), by the body size limit, and by how the transfer is made: the transport's type (and instance, for a
/// class), the TLS options (a pinned call never takes a response fetched without its pins), the proxy and the
/// lane. The shared transfer is read into memory; each caller gets the same head and bytes and runs its own
/// decisions and parser. A caller that cancels stops waiting at once; the transfer
/// is cancelled only when every caller has cancelled.
final class InflightRequests: Sendable {
    private struct Shared: Sendable {
        var head: HTTPResponse
        var body: Data
        /// Why the body of a response that is not a success could not be read (over the limit, cut short): each
        /// caller's body fails with it, so the pipeline still sees the status (as without de-duplication).
        var bodyError: CourierError? = nil
        /// The mark of the caller that started the transfer (see ``send(_:mark:context:over:)``).
        var mark: Mark?
    }

    private struct Flight {
        var id: Int
        /// The mark of the caller that started it.
        var mark: Mark?
        /// ``State/clock`` when it started.
        var startedAt: UInt64
        var task: Task<Void, Never>?
        var waiters: [Int: CheckedContinuation<Shared, any Error>] = [:]
    }

    private struct State {
        var flights: [Key: Flight] = [:]
        /// Callers that have an ID but have not joined a flight yet, and those of them cancelled meanwhile.
        var pending: Set<Int> = []
        var cancelled: Set<Int> = []
        var lastID = 0
        /// Counts flights started and writes noted: orders the two.
        var clock: UInt64 = 0
        /// The last successful unsafe request (`PUT`, `POST`, `DELETE`, …) to each URL it invalidates, by
        /// ``clock``, while flights are in flight (``noteWrite(_:)``): a flight of that URL that started before it
        /// is not joined.
        var lastWrite: [String: UInt64] = [:]
        /// Callers of ``waitForCallers(_:)`` and the count each waits for.
        var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        var callers: Int { flights.values.reduce(0) { $0 + $1.waiters.count } }

        /// Removes and returns the watchers whose count is reached.
        mutating func readyWatchers() -> [CheckedContinuation<Void, Never>] {
            let current = callers
            let ready = watchers.filter { $0.count <= current }.map(\.continuation)
            watchers.removeAll { $0.count <= current }
            return ready
        }
    }

    private let state = LockedBox(State())

    init() {}

    /// Header fields that differ per call without changing the response.
    private static let ignoredFields: Set<String> = ["traceparent", "tracestate", "x-request-id", "idempotency-key"]

    /// Whether `request` may share a transfer.
    static func canShare(_ request: OutgoingRequest) -> Bool {
        (request.head.method == .get || request.head.method == .head) && request.body == nil
    }

    /// How many transfers are in flight, and how many callers wait on them.
    var counts: (transfers: Int, callers: Int) {
        state.withLock { state in (state.flights.count, state.callers) }
    }

    /// Returns once at least `count` callers wait on transfers in flight (for tests: no polling).
    func waitForCallers(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.callers >= count { return true }
                state.watchers.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Sends `request`, or joins the identical transfer in flight.
    func send(
        _ request: OutgoingRequest,
        context: TransportContext,
        over transport: any Transport
    ) async throws -> TransportResponse {
        try await send(request, mark: nil, context: context, over: transport).response
    }

    /// Where a cache stood when a transfer started: which cache, and its removal count then.
    struct Mark: Equatable, Sendable {
        var cache: ObjectIdentifier
        var removals: UInt64
    }

    /// Sends `request`, or joins the identical transfer in flight, and returns the `mark` of the caller that
    /// started the transfer (`nil`: one that stores nothing): a caller that joined gets a response fetched since
    /// that caller's mark, not its own, so that a response fetched before an invalidation is not stored after it.
    ///
    /// A caller whose cache has seen a removal since the transfer in flight started (a `PUT` invalidated the page,
    /// a sign-out purged the user's entries), or any caller after an unsafe request succeeded since it started
    /// to its URL (``noteWrite(_:)``, with or without a cache), does not join it: it would get the response from
    /// before, and a
    /// `GET` right after a successful `PUT` would read the old page. It makes a transfer of its own, not shared.
    func send(
        _ request: OutgoingRequest,
        mark: Mark?,
        context: TransportContext,
        over transport: any Transport
    ) async throws -> (response: TransportResponse, mark: Mark?) {
        let key = Self.key(of: request, context: context, transport: transport)
        let waiter = state.withLock { state -> Int in
            state.lastID += 1
            state.pending.insert(state.lastID)
            return state.lastID
        }
        let shared: Shared
        do {
            shared = try await join(key: key, waiter: waiter, request, mark: mark, context: context, over: transport)
        } catch is StartedBeforeRemoval {
            return (try await transport.send(request, context: context), mark)
        }
        let body = shared.bodyError.map(BodyReader.failing) ?? MessageBody(shared.body)
        return (TransportResponse(head: shared.head, body: body), shared.mark)
    }

    /// The transfer in flight started before a removal the caller's cache has seen since, or before a write.
    private struct StartedBeforeRemoval: Error {}

    /// Notes that an unsafe request succeeded: transfers in flight from before it are not joined any more. A `GET`
    /// right after a successful `PUT` would otherwise get the page as it was before, from a transfer that started
    /// earlier, also on a client without a cache (whose removals cannot tell).
    func noteWrite(_ urls: [String]) {
        state.withLock { state in
            guard let oldest = state.flights.values.lazy.map(\.startedAt).min() else {
                state.lastWrite.removeAll()  // nothing in flight: no join to decide
                return
            }
            state.clock &+= 1
            if state.lastWrite.count > 64 { state.lastWrite = state.lastWrite.filter { $0.value > oldest } }
            for url in urls { state.lastWrite[url] = state.clock }
        }
    }

    /// Joins the transfer in flight for `key`, or starts it; throws ``StartedBeforeRemoval`` when the caller may
    /// not join the one in flight.
    private func join(
        key: Key,
        waiter: Int,
        _ request: OutgoingRequest,
        mark: Mark?,
        context: TransportContext,
        over transport: any Transport
    ) async throws -> Shared {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Shared, any Error>) in
                let (start, ready) = state.withLock { state -> (Int?, [CheckedContinuation<Void, Never>]) in
                    state.pending.remove(waiter)
                    if state.cancelled.remove(waiter) != nil {
                        continuation.resume(throwing: CancellationError())
                        return (nil, [])
                    }
                    if let flight = state.flights[key] {
                        let beforeRemoval =
                            if let mark, let started = flight.mark {
                                started.cache == mark.cache && started.removals < mark.removals
                            } else {
                                false
                            }
                        let beforeWrite = state.lastWrite[request.head.url?.absoluteString ?? ""].map {
                            $0 > flight.startedAt
                        }
                        if beforeRemoval || beforeWrite == true {
                            continuation.resume(throwing: StartedBeforeRemoval())
                            return (nil, [])
                        }
                        state.flights[key]?.waiters[waiter] = continuation
                        return (nil, state.readyWatchers())
                    }
                    state.lastID += 1
                    state.clock &+= 1
                    state.flights[key] = Flight(
                        id: state.lastID, mark: mark, startedAt: state.clock, waiters: [waiter: continuation])
                    return (state.lastID, state.readyWatchers())
                }
                for watcher in ready { watcher.resume() }
                guard let flightID = start else { return }
                // The shared transfer has no deadline of its own: each caller's deadline cancels its wait.
                var sharedContext = context
                sharedContext.deadlineMoment = nil
                let task = Task { [self] in
                    await run(
                        request, context: sharedContext, over: transport, key: key, flightID: flightID, mark: mark)
                }
                let orphaned = state.withLock { state -> Bool in
                    guard state.flights[key]?.id == flightID else { return true }
                    state.flights[key]?.task = task
                    return false
                }
                if orphaned { task.cancel() }
            }
        } onCancel: {
            leave(key: key, waiter: waiter)
        }
    }

    private func run(
        _ request: OutgoingRequest,
        context: TransportContext,
        over transport: any Transport,
        key: Key,
        flightID: Int,
        mark: Mark?
    ) async {
        let result: Result<Shared, any Error>
        do {
            let response = try await transport.send(request, context: context)
            do {
                let body = try await BodyReader.read(
                    response, for: request.head.method, limit: context.maxResponseBodySize)
                result = .success(Shared(head: response.head, body: body, mark: mark))
            } catch let error as CourierError where BodyReader.keepsStatus(of: response.head, after: error) {
                result = .success(Shared(head: response.head, body: Data(), bodyError: error, mark: mark))
            }
        } catch {
            result = .failure(error)
        }
        let waiters = state.withLock { state -> [CheckedContinuation<Shared, any Error>] in
            guard state.flights[key]?.id == flightID else { return [] }
            return state.flights.removeValue(forKey: key).map { Array($0.waiters.values) } ?? []
        }
        for waiter in waiters { waiter.resume(with: result) }
    }

    private func leave(key: Key, waiter: Int) {
        let (continuation, task) = state.withLock {
            state -> (CheckedContinuation<Shared, any Error>?, Task<Void, Never>?) in
            guard let continuation = state.flights[key]?.waiters.removeValue(forKey: waiter) else {
                // Not joined yet: it fails as soon as it tries. Already answered: nothing to do.
                if state.pending.contains(waiter) { state.cancelled.insert(waiter) }
                return (nil, nil)
            }
            if state.flights[key]?.waiters.isEmpty == true {
                return (continuation, state.flights.removeValue(forKey: key)?.task)
            }
            return (continuation, nil)
        }
        continuation?.resume(throwing: CancellationError())
        task?.cancel()
    }

    /// What makes two transfers the same one.
    private struct Key: Hashable, Sendable {
        /// Method, URL, body size limit and header fields.
        var request: String
        var tls: TLSOptions
        var proxy: ProxyOptions
        var lane: RequestLane
        var transportType: ObjectIdentifier
        /// The transport instance, for a class (a struct has no identity to compare).
        var transport: ObjectIdentifier?
    }

    private static func key(of request: OutgoingRequest, context: TransportContext, transport: any Transport) -> Key {
        var text = "\(request.head.method.rawValue) \(request.head.url?.absoluteString ?? "")"
        text += " \(context.maxResponseBodySize)"
        for field in request.head.headerFields where !ignoredFields.contains(field.name.canonicalName) {
            text += "\n\(field.name.canonicalName): \(field.value)"
        }
        let type = type(of: transport)
        return Key(
            request: text, tls: context.tls, proxy: context.proxy, lane: context.lane,
            transportType: ObjectIdentifier(type),
            transport: type is AnyClass ? ObjectIdentifier(transport as AnyObject) : nil)
    }
}
