public import Foundation

/// An RFC 9111 private HTTP cache, with RFC 5861 `stale-while-revalidate` / `stale-if-error` and an offline
/// fallback, in memory or on disk; works the same on Linux and Apple platforms (it does not use `URLCache`).
///
/// Give one to a client with ``Client/Configuration/cache``; each request chooses how it uses it with
/// ``Request/cachePolicy``. The cache sits around the transport (design §1 step 4): a fresh entry skips the
/// network, a stale one is revalidated with `If-None-Match` / `If-Modified-Since`, and a `304` serves the stored
/// body with the merged headers. Only GET responses are stored; unsafe methods invalidate what they touch.
///
/// Entries are partitioned by credential: the `Authorization` value (as an HMAC-SHA-256 digest, never in the
/// clear) is part of every key, or without one the values of the other credential headers the client's ``Redactor``
/// knows (`Cookie`, `X-Api-Key`, …), so one user's entry is never served to another. When the client authenticates with an
/// ``Authenticator``, signing in, a refresh and signing out purge the entries of the previous credential.
///
/// ```swift
/// let cache = try HTTPCache(storage: .disk(directory: cachesURL.appending(path: "api"), byteLimit: 50 << 20))
/// let client = Client(server: api, transport: transport).configured { $0.cache = cache }
/// ```
///
/// Thread-safe; share one cache between clients of the same user. One cache per disk directory.
public final class HTTPCache: Sendable {
    /// Where the entries live.
    public enum Storage: Sendable {
        /// In memory, least recently used evicted past `byteLimit` bytes; gone when the process ends.
        case memory(byteLimit: Int)
        /// Files in `directory` (created if needed), least recently used evicted past `byteLimit` bytes; kept
        /// across launches. Corrupt or half-written entries are detected by length and CRC-32, and dropped.
        ///
        /// A directory the cache creates is owner-only (0700), and every file it writes 0600; credential
        /// partitions, and the credentials a response's `Vary` names (`Authorization`, `Cookie`, …), are an HMAC
        /// under a random key kept in the directory, so file names and contents give no credential away. The cache
        /// touches only its own files (`.lock`, `.partition-key`, `<SHA-256>.cache` and their temporary files), so a
        /// shared directory such as an app's Caches keeps its other files; a subdirectory of its own is still the
        /// tidier choice. One process at a time: a second ``HTTPCache`` on the same directory, in this process or
        /// another, fails with ``CourierError/Code/unsupported`` while the first is open (an advisory lock on `.lock`).
        case disk(directory: URL, byteLimit: Int)
    }

    /// Whether a stored response is served, marked stale, when the network fails (RFC 9111 §4.2.4 allows it
    /// for a disconnected cache), unless it says `must-revalidate` or `no-cache`. `stale-if-error` applies
    /// either way. A connection reset on a call's first attempt that the call's retry policy retries (a keep-alive
    /// connection the server had closed) is retried first.
    public let servesStaleWhenOffline: Bool
    /// The largest streamed response body the cache stores, in bytes. A streamed body (a ``LiveResponse``, a
    /// download, a generated OpenAPI client's operation) goes to the caller as it arrives; when the response is
    /// storable, a copy is kept on the side, and the response is stored when the caller reads it to its end, whole.
    /// The copy is bounded by this and by the call's ``Request/maxResponseBodySize`` (else the client's
    /// ``Client/Configuration/maxResponseBodySize``), whichever is smaller. A longer body (or one whose
    /// `Content-Length` announces more), one read only in part, one that fails, and one that ends after the cache
    /// removed entries (a sign-out, a refresh, an unsafe request's invalidation, ``removeAll()``) is not stored, and
    /// its copy is let go. `text/event-stream` responses are never stored: an event stream is a live feed.
    public let maxStreamedBodySize: Int
    /// The current time: inject a fixed clock in tests so freshness is computed without waiting.
    let now: @Sendable () -> Date
    let store: any CacheStore
    /// The same store when it is a built-in one, answered synchronously.
    let local: (any LocalCacheStore)?
    private let background = LockedBox<[Int: Task<Void, Never>]>([:])
    private let attached = LockedBox<Set<ObjectIdentifier>>([])
    private let backgroundIDs = LockedBox(0)
    /// The entries whose `stale-while-revalidate` revalidation is running.
    private let revalidating = LockedBox<Set<CacheKey>>([])
    /// The removals seen, so that a response fetched before one is not stored after it (see
    /// ``keep(_:ifNoRemovalSince:)``).
    private let removals = LockedBox(Removals())

    /// Creates a cache.
    ///
    /// - Parameters:
    ///   - storage: Memory (the default, 10 MiB) or a directory on disk.
    ///   - servesStaleWhenOffline: Serve the last stored response, marked stale, when the network fails.
    ///   - maxStreamedBodySize: The largest streamed body stored (see ``maxStreamedBodySize``). Default: 1 MiB.
    ///   - now: The current time; inject a fixed clock in tests.
    /// - Throws: When the disk directory cannot be created or read, or another cache holds it.
    public convenience init(
        storage: Storage = .memory(byteLimit: 10 << 20),
        servesStaleWhenOffline: Bool = true,
        maxStreamedBodySize: Int = 1 << 20,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        let store: any CacheStore =
            switch storage {
            case .memory(let byteLimit): MemoryCacheStore(byteLimit: byteLimit)
            case .disk(let directory, let byteLimit): try DiskCacheStore(directory: directory, byteLimit: byteLimit)
            }
        self.init(
            store: store, servesStaleWhenOffline: servesStaleWhenOffline, maxStreamedBodySize: maxStreamedBodySize,
            now: now)
    }

    /// An in-memory cache of at most `byteLimit` bytes.
    public static func memory(byteLimit: Int = 10 << 20) -> HTTPCache {
        HTTPCache(store: MemoryCacheStore(byteLimit: byteLimit))
    }

    /// Creates a cache on a store of your own, such as one several processes share.
    ///
    /// ```swift
    /// let cache = HTTPCache(store: PostgresCacheStore(client: postgres, namespace: "github", key: cacheKey))
    /// ```
    ///
    /// - Parameters:
    ///   - store: Where the entries live; see ``CacheStore`` for its contract.
    ///   - servesStaleWhenOffline: Serve the last stored response, marked stale, when the network fails.
    ///   - maxStreamedBodySize: The largest streamed body stored (see ``maxStreamedBodySize``). Default: 1 MiB.
    ///   - now: The current time; inject a fixed clock in tests.
    public init(
        store: any CacheStore,
        servesStaleWhenOffline: Bool = true,
        maxStreamedBodySize: Int = 1 << 20,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.store = store
        self.local = store as? any LocalCacheStore
        self.servesStaleWhenOffline = servesStaleWhenOffline
        self.maxStreamedBodySize = max(0, maxStreamedBodySize)
        self.now = now
    }

    /// The bytes the stored entries take, for the memory and disk stores; `0` for a store of your own (ask it).
    public var totalBytes: Int { local?.totalBytes ?? 0 }

    /// How many responses are stored, for every credential, for the memory and disk stores; `0` for a store of
    /// your own (ask it).
    public var count: Int { local?.count ?? 0 }

    /// Removes every entry, for every credential.
    ///
    /// With a store of your own the removal runs in the background; await ``removeEntries(_:)`` to know when it is
    /// done.
    public func removeAll() {
        remove(.all)
    }

    /// Removes the entries for `url` (every credential's), as a successful unsafe request to it does.
    ///
    /// With a store of your own the removal runs in the background; await ``removeEntries(_:)`` to know when it is
    /// done.
    public func removeEntries(for url: URL) {
        remove(.url(url.absoluteString))
    }

    /// Removes the entries of requests signed with the `Authorization` value `authorization` alone.
    ///
    /// A request that also carried another credential header (`X-Api-Key`, `Cookie`, a CSRF token) is in a
    /// partition of all of them together, which this does not name: to forget a user, use ``removeAll()`` or let
    /// an `Authenticator` the cache follows purge every signed partition at sign-out.
    ///
    /// With a store of your own the removal runs in the background; await ``removeEntries(_:)`` to know when it is
    /// done.
    public func removeEntries(signedWith authorization: String) {
        remove(.partition(CacheKey.partition(ofAuthorization: authorization, key: store.partitionKey)))
    }

    /// Removes the entries `selection` names, and returns once the store has.
    ///
    /// - Throws: The store's error when it cannot remove them.
    public func removeEntries(_ selection: CacheSelection) async throws {
        noteRemoval(selection)
        try await store.removeEntries(selection)
    }

    /// The entry at `key`; a store's error is a miss.
    func lookUp(_ key: CacheKey) async -> CacheEntry? {
        if let local { return local.cachedEntry(for: key) }
        return try? await store.entry(for: key)
    }

    /// How many removals the cache has seen: read it before fetching a response, and store the response with
    /// ``keep(_:ifNoRemovalSince:)``.
    var removalCount: UInt64 { removals.withLock { $0.count } }

    /// Stores `entry` unless a removal that reaches its key came since `removalCount` was `generation`: a response
    /// fetched before a sign-out, a refresh's purge, an unsafe request's invalidation or the replacement of its own
    /// entry must not come back after it. A removal of another single key (a call replacing its own entry) does not
    /// reach it. A `generation` past the current count (a transfer of another cache's) stores nothing. For the
    /// built-in stores the check and the store are atomic with respect to removals; for a store of your own, a
    /// removal racing the store itself may still be overtaken. A store's error is skipped. Returns whether the entry
    /// was stored.
    @discardableResult
    func keep(_ entry: CacheEntry, ifNoRemovalSince generation: UInt64) async -> Bool {
        if let local {
            return removals.withLock { removals in
                removals.allow(entry.key, since: generation) && local.keep(entry)
            }
        }
        guard removals.withLock({ $0.allow(entry.key, since: generation) }) else { return false }
        do {
            try await store.store(entry)
            return true
        } catch {
            return false
        }
    }

    /// Removes `selection` before returning; a store's error is skipped.
    func discard(_ selection: CacheSelection) async {
        noteRemoval(selection)
        if let local { return local.removeAll { selection.contains($0) } }
        try? await store.removeEntries(selection)
    }

    /// Counts a removal of `selection`, before it happens: a store that checks after this skips its entry.
    private func noteRemoval(_ selection: CacheSelection) {
        removals.withLock { $0.note(selection) }
    }

    /// Removes `selection` at once from a built-in store, or in the background from another.
    private func remove(_ selection: CacheSelection) {
        noteRemoval(selection)
        if let local {
            local.removeAll { selection.contains($0) }
        } else {
            let store = self.store
            runInBackground { try? await store.removeEntries(selection) }
        }
    }

    /// Purges signed entries when `authenticator`'s credential changes: on sign-in, refresh or loading from its
    /// store, every signed entry but the new credential's; on sign-out, every signed entry. Unsigned entries
    /// stay. A client does this by itself, from its creation, for the authenticator of its
    /// ``Client/Configuration/authenticate(with:origins:rejectedWhen:)``; call it for an authenticator used another
    /// way. One authenticator per cache.
    public func follow(_ authenticator: Authenticator) {
        let isNew = attached.withLock { $0.insert(ObjectIdentifier(authenticator)).inserted }
        guard isNew else { return }
        authenticator.signatures.observe { [weak self] change in
            guard let self else { return }
            switch change {
            case .installed(let authorization):
                let keep = CacheKey.partition(ofAuthorization: authorization, key: self.store.partitionKey)
                remove(.signedPartitions(except: keep))
            case .cleared:
                remove(.signedPartitions(except: nil))
            }
        }
    }

    /// Runs the `stale-while-revalidate` revalidation of `key` in the background, unless one of it is running
    /// already: the stale hits that come while it runs share it, instead of each sending its own request.
    func revalidateInBackground(_ key: CacheKey, _ work: @escaping @Sendable () async -> Void) {
        guard revalidating.withLock({ $0.insert(key).inserted }) else { return }
        runInBackground { [weak self] in
            await work()
            _ = self?.revalidating.withLock { $0.remove(key) }
        }
    }

    /// Runs `work` in the background (a revalidation, a removal), remembered until it ends.
    func runInBackground(_ work: @escaping @Sendable () async -> Void) {
        let id = backgroundIDs.withLock { id -> Int in
            id += 1
            return id
        }
        background.withLock { tasks in
            tasks[id] = Task { [weak self] in
                await work()
                _ = self?.background.withLock { $0.removeValue(forKey: id) }
            }
        }
    }

    /// Waits for the background revalidations started so far (tests and orderly shutdown).
    package func backgroundRevalidations() async {
        for task in background.withLock({ Array($0.values) }) { await task.value }
    }

    /// The removals a cache has seen, numbered in order: a fetch notes ``count`` when it starts, and its response is
    /// stored only if no removal numbered after that reaches its key.
    struct Removals {
        /// How many keys ``lastByKey`` remembers; one more and they are forgotten for a wide removal, which only
        /// keeps more responses out.
        static let keyLimit = 256

        /// The number of the last removal (how many there were).
        private(set) var count: UInt64 = 0
        /// The number of the last removal wider than one key (everything, a URL, a partition, the signed ones): it
        /// reaches every key.
        private var lastWide: UInt64 = 0
        /// The number of the last removal of each key removed alone since ``lastWide``.
        private var lastByKey: [CacheKey: UInt64] = [:]

        /// Numbers a removal of `selection`.
        mutating func note(_ selection: CacheSelection) {
            count &+= 1
            if case .key(let key) = selection, lastByKey[key] != nil || lastByKey.count < Self.keyLimit {
                lastByKey[key] = count
            } else {
                lastWide = count
                lastByKey.removeAll()
            }
        }

        /// Whether a response for `key` fetched when ``count`` was `generation` may be stored: no removal since then
        /// reaches `key`, and `generation` is a count this cache has had.
        func allow(_ key: CacheKey, since generation: UInt64) -> Bool {
            generation <= count && lastWide <= generation && (lastByKey[key] ?? 0) <= generation
        }
    }
}
