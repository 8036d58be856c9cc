public import Foundation

/// An RFC 9111 private HTTP cache, with RFC 5861 `stale-while-revalidate` / `stale-if-error` and an offline
/// fallback, in memory or on disk; works the same on Linux and Apple platforms (it does not use `URLCache`).
///
/// Give one to a client with ``Client/Configuration/cache``; each request chooses how it uses it with
/// ``Request/cachePolicy``. The cache sits around the transport (design §1 step 4): a fresh entry skips the
/// network, a stale one is revalidated with `If-None-Match` / `If-Modified-Since`, and a `304` serves the stored
/// body with the merged headers. Only GET responses are stored; unsafe methods invalidate what they touch.
///
/// Entries are partitioned by credential: the `Authorization` value (as a SHA-256 digest, never in the clear)
/// is part of every key, so one user's entry is never served to another. When the client authenticates with an
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
        /// The directory is made owner-only (0700) and every file in it 0600; credential partitions are an HMAC
        /// under a random key kept in the directory, so file names and contents give no credential away. One
        /// process at a time: a second ``HTTPCache`` on the same directory, in this process or another, fails with
        /// ``CourierError/Code/unsupported`` while the first is open (an advisory lock on `.lock`).
        case disk(directory: URL, byteLimit: Int)
    }

    /// Whether a stored response is served, marked stale, when the network fails (RFC 9111 §4.2.4 allows it
    /// for a disconnected cache), unless it says `must-revalidate` or `no-cache`. `stale-if-error` applies
    /// either way.
    public let servesStaleWhenOffline: Bool
    /// The current time: inject a fixed clock in tests so freshness is computed without waiting.
    let now: @Sendable () -> Date
    let store: any CacheStore
    private let background = LockedBox<[Int: Task<Void, Never>]>([:])
    private let attached = LockedBox<Set<ObjectIdentifier>>([])
    private let backgroundIDs = LockedBox(0)

    /// Creates a cache.
    ///
    /// - Parameters:
    ///   - storage: Memory (the default, 10 MiB) or a directory on disk.
    ///   - servesStaleWhenOffline: Serve the last stored response, marked stale, when the network fails.
    ///   - now: The current time; inject a fixed clock in tests.
    /// - Throws: When the disk directory cannot be created or read, or another cache holds it.
    public init(
        storage: Storage = .memory(byteLimit: 10 << 20),
        servesStaleWhenOffline: Bool = true,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        switch storage {
        case .memory(let byteLimit): store = MemoryCacheStore(byteLimit: byteLimit)
        case .disk(let directory, let byteLimit): store = try DiskCacheStore(directory: directory, byteLimit: byteLimit)
        }
        self.servesStaleWhenOffline = servesStaleWhenOffline
        self.now = now
    }

    /// An in-memory cache of at most `byteLimit` bytes.
    public static func memory(byteLimit: Int = 10 << 20) -> HTTPCache {
        HTTPCache(store: MemoryCacheStore(byteLimit: byteLimit), servesStaleWhenOffline: true, now: { Date() })
    }

    init(store: any CacheStore, servesStaleWhenOffline: Bool, now: @escaping @Sendable () -> Date) {
        self.store = store
        self.servesStaleWhenOffline = servesStaleWhenOffline
        self.now = now
    }

    /// The bytes the stored entries take.
    public var totalBytes: Int { store.totalBytes }

    /// How many responses are stored, for every credential.
    public var count: Int { store.count }

    /// Removes every entry, for every credential.
    public func removeAll() {
        store.removeAll { _ in true }
    }

    /// Removes the entries for `url` (every credential's), as a successful unsafe request to it does.
    public func removeEntries(for url: URL) {
        let text = url.absoluteString
        store.removeAll { $0.url == text }
    }

    /// Removes the entries of requests signed with the `Authorization` value `authorization`.
    public func removeEntries(signedWith authorization: String) {
        let partition = CacheKey.partition(ofAuthorization: authorization, key: store.partitionKey)
        store.removeAll { $0.partition == partition }
    }

    /// Purges signed entries when `authenticator`'s credential changes: on sign-in, refresh or loading from its
    /// store, every signed entry but the new credential's; on sign-out, every signed entry. Unsigned entries
    /// stay. The client does this by itself for the authenticator of its ``Client/Configuration/authenticate(with:origins:rejectedWhen:)``;
    /// call it for an authenticator used another way. One authenticator per cache.
    public func follow(_ authenticator: Authenticator) {
        let isNew = attached.withLock { $0.insert(ObjectIdentifier(authenticator)).inserted }
        guard isNew else { return }
        authenticator.signatures.observe { [weak self] change in
            guard let self else { return }
            switch change {
            case .installed(let authorization):
                let keep = CacheKey.partition(ofAuthorization: authorization, key: self.store.partitionKey)
                store.removeAll { !$0.partition.isEmpty && $0.partition != keep }
            case .cleared:
                store.removeAll { !$0.partition.isEmpty }
            }
        }
    }

    /// Runs `work` in the background (a `stale-while-revalidate` revalidation), remembered until it ends.
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
}
