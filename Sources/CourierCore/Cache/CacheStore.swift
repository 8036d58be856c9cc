/// Where an ``HTTPCache`` keeps its entries: memory, a directory, or a store shared by many processes (such as
/// CourierPostgres's `PostgresCacheStore`).
///
/// The cache decides what is stored, for how long it is fresh, and what an unsafe method invalidates (RFC 9111);
/// the store only keeps entries by ``CacheKey``, bounded by bytes (``CacheEntry/cost``), and evicts as it sees fit.
///
/// Concurrency contract: the cache calls a store from many tasks at once, on every cached call (a lookup, and a
/// store after a miss). A store must be safe to call concurrently; an error it throws never fails a call: a failed
/// lookup is a miss, a failed store or removal is skipped. Keep lookups fast, since they are on the call's path.
///
/// ```swift
/// let cache = HTTPCache(store: PostgresCacheStore(client: postgres, namespace: "github", key: cacheKey))
/// let client = Client(server: api, transport: transport).configured { $0.cache = cache }
/// ```
public protocol CacheStore: Sendable {
    /// The key credential partitions are an HMAC under (32 bytes): random per memory store, kept in a disk
    /// store's directory, derived from the application's key in a shared store, so every process that shares
    /// the store computes the same partitions.
    var partitionKey: [UInt8] { get }

    /// The entry at `key`, or `nil`; a corrupt entry is dropped and reported as `nil`.
    ///
    /// - Throws: When the store cannot be read; the cache treats it as a miss.
    func entry(for key: CacheKey) async throws -> CacheEntry?

    /// Stores `entry`, replacing the one at its key, then evicts entries over the store's byte limit. An entry the
    /// store will not keep (too large) removes the one at its key instead.
    ///
    /// - Throws: When the store cannot be written; the cache goes on without it.
    func store(_ entry: CacheEntry) async throws

    /// Removes the entries `selection` names.
    ///
    /// - Throws: When the store cannot be written.
    func removeEntries(_ selection: CacheSelection) async throws
}

/// Which entries ``CacheStore/removeEntries(_:)`` removes.
public enum CacheSelection: Hashable, Sendable {
    /// Every entry.
    case all
    /// The entry at one key.
    case key(CacheKey)
    /// Every credential's entry for an absolute URL (what an unsafe method invalidates).
    case url(String)
    /// Every entry of one credential partition.
    case partition(String)
    /// Every signed entry (partition not `""`) except those of `partition`, or all of them when `nil` (what a new
    /// credential, or signing out, purges).
    case signedPartitions(except: String?)

    /// Whether `key` is selected.
    public func contains(_ key: CacheKey) -> Bool {
        switch self {
        case .all: true
        case .key(let selected): key == selected
        case .url(let url): key.url == url
        case .partition(let partition): key.partition == partition
        case .signedPartitions(let kept): !key.partition.isEmpty && key.partition != kept
        }
    }
}

/// A store in this process, answered synchronously: memory and disk. The cache uses these calls directly, so the
/// built-in stores keep their synchronous ``HTTPCache/count`` and removal.
protocol LocalCacheStore: CacheStore {
    /// The entry at `key`, or `nil`.
    func cachedEntry(for key: CacheKey) -> CacheEntry?
    /// Stores `entry`, replacing the one at its key, then evicts past the byte limit; returns whether it was stored
    /// (an entry larger than the whole store, or one the disk would not take, is not: its key is emptied instead).
    @discardableResult
    func keep(_ entry: CacheEntry) -> Bool
    /// Removes every entry whose key satisfies `predicate`.
    func removeAll(where predicate: (CacheKey) -> Bool)
    /// The bytes the entries take.
    var totalBytes: Int { get }
    /// How many entries there are.
    var count: Int { get }
}

extension LocalCacheStore {
    func entry(for key: CacheKey) -> CacheEntry? { cachedEntry(for: key) }
    func store(_ entry: CacheEntry) { keep(entry) }
    func removeEntries(_ selection: CacheSelection) { removeAll { selection.contains($0) } }
}

/// Entries in memory, least recently used evicted first once `byteLimit` is crossed.
final class MemoryCacheStore: LocalCacheStore {
    private struct State {
        var entries: [CacheKey: (entry: CacheEntry, tick: UInt64)] = [:]
        var totalBytes = 0
        var tick: UInt64 = 0
    }

    let byteLimit: Int
    let partitionKey = CacheKey.randomPartitionKey()
    private let state = LockedBox(State())

    init(byteLimit: Int) {
        self.byteLimit = byteLimit
    }

    func cachedEntry(for key: CacheKey) -> CacheEntry? {
        state.withLock { state in
            guard let found = state.entries[key] else { return nil }
            state.tick += 1
            state.entries[key] = (found.entry, state.tick)
            return found.entry
        }
    }

    @discardableResult
    func keep(_ entry: CacheEntry) -> Bool {
        guard entry.cost <= byteLimit else {
            removeAll { $0 == entry.key }
            return false
        }
        state.withLock { state in
            state.tick += 1
            if let old = state.entries[entry.key] { state.totalBytes -= old.entry.cost }
            state.entries[entry.key] = (entry, state.tick)
            state.totalBytes += entry.cost
            while state.totalBytes > byteLimit, let oldest = state.entries.min(by: { $0.value.tick < $1.value.tick }) {
                state.entries[oldest.key] = nil
                state.totalBytes -= oldest.value.entry.cost
            }
        }
        return true
    }

    func removeAll(where predicate: (CacheKey) -> Bool) {
        state.withLock { state in
            for key in state.entries.keys where predicate(key) {
                state.totalBytes -= state.entries[key]?.entry.cost ?? 0
                state.entries[key] = nil
            }
        }
    }

    var totalBytes: Int { state.withLock { $0.totalBytes } }
    var count: Int { state.withLock { $0.entries.count } }
}
