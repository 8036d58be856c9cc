/// Where an ``HTTPCache`` keeps its entries. Implementations are thread-safe and bounded by bytes.
protocol CacheStore: Sendable {
    /// The key credential partitions are an HMAC under: random per memory store, kept in a disk store's directory.
    var partitionKey: [UInt8] { get }
    /// The entry at `key`, or `nil` (a corrupt entry is dropped and reported as `nil`).
    func entry(for key: CacheKey) -> CacheEntry?
    /// Stores `entry`, replacing the one at its key, then evicts least recently used entries over the limit.
    func store(_ entry: CacheEntry)
    /// Removes every entry whose key satisfies `predicate`.
    func removeAll(where predicate: (CacheKey) -> Bool)
    /// The bytes the entries take.
    var totalBytes: Int { get }
    /// How many entries there are.
    var count: Int { get }
}

/// Entries in memory, least recently used evicted first once `byteLimit` is crossed.
final class MemoryCacheStore: CacheStore {
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

    func entry(for key: CacheKey) -> CacheEntry? {
        state.withLock { state in
            guard let found = state.entries[key] else { return nil }
            state.tick += 1
            state.entries[key] = (found.entry, state.tick)
            return found.entry
        }
    }

    func store(_ entry: CacheEntry) {
        guard entry.cost <= byteLimit else {
            removeAll { $0 == entry.key }
            return
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
