import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Entries as files in a directory the user chose, one file per entry, bounded by bytes, kept across launches.
///
/// The format is chosen for crash safety and speed, not for sharing:
/// - one file per entry, named by a SHA-256 of its key, so a lookup is one `open`+`read` with no index file to
///   keep consistent, and eviction is one `unlink`;
/// - each file is written whole to a temporary file (`<entry>.<random>.tmp`, 0600) and renamed into place, so a
///   reader sees the old entry or the new one, never a mix;
/// - a 24-byte header (magic, version, head and body lengths, CRC-32 of both) comes first, so a truncated file
///   (power loss after the rename, a full disk) or a flipped bit is detected and the entry dropped, never served;
/// - the head is a small JSON document (key, status, header fields, times, `Vary` values), the body raw bytes
///   after it, so serving a hit copies the body once.
///
/// Privacy and sharing:
/// - a directory the store creates is 0700 (an existing one keeps its mode), and every file it writes 0600 (the
///   owner only);
/// - it deletes only files it could have written (an entry's name, or its temporary file's): another program's
///   files in the directory, such as an app's own Caches folder, are left alone;
/// - credential partitions, and the request credentials a `Vary` names (``CacheEntry/vary``), are an HMAC-SHA256
///   under a random 32-byte key kept in `.partition-key`, so neither a file name nor a file's head lets anyone
///   guess a credential;
/// - one store per directory: an advisory `flock` on `.lock`, held while the store lives, makes a second store (in
///   this process or another) fail at once with a clear error instead of tearing entries.
final class DiskCacheStore: LocalCacheStore {
    private struct Record {
        var key: CacheKey
        var size: Int
        var tick: UInt64
    }

    private struct State {
        var records: [String: Record] = [:]
        var totalBytes = 0
        var tick: UInt64 = 0
    }

    private struct Head: Codable {
        var partition: String
        var url: String
        var status: Int
        var headers: [[String]]
        var requestTime: Double
        var responseTime: Double
        var vary: [String: String?]
    }

    static let magic: [UInt8] = Array("CRCH".utf8)
    /// 2: partitions are HMACs under the directory's key (1 used a plain SHA-256); 3: so are the credentials a `Vary`
    /// names (2 kept them in the clear). Older files are dropped when the store opens.
    static let version: UInt32 = 3
    static let headerSize = 24

    let directory: URL
    let byteLimit: Int
    let partitionKey: [UInt8]
    private let state = LockedBox(State())
    /// The descriptor holding the directory's advisory lock, closed (releasing it) when the store goes.
    private let lockDescriptor: Int32

    /// Opens (creating it if needed) `directory`, indexes its entries and deletes its own files that are not valid
    /// entries (corrupt ones, and temporary files a crash left behind).
    ///
    /// - Throws: When the directory cannot be created or listed.
    init(directory: URL, byteLimit: Int) throws {
        self.directory = directory
        self.byteLimit = byteLimit
        let manager = FileManager.default
        if !manager.fileExists(atPath: directory.path) {
            try manager.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            // Again: the umask may have narrowed the mode `createDirectory` was given, never widened it.
            try manager.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        }
        lockDescriptor = try Self.lock(directory)
        do {
            partitionKey = try Self.loadPartitionKey(in: directory)
        } catch {
            close(lockDescriptor)
            throw error
        }
        let files = try manager.contentsOfDirectory(
            at: directory, includingPropertiesForKeys: [.contentModificationDateKey, .fileSizeKey, .isRegularFileKey])
        var found: [(name: String, record: Record, date: Date)] = []
        for file in files {
            let name = file.lastPathComponent
            guard let kind = Self.ownFile(name),
                (try? file.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true
            else { continue }  // not the store's: left alone
            guard kind == .entry, let key = Self.readKey(of: file) else {
                // A temporary file left by a crash mid-write, or a corrupt entry.
                try? manager.removeItem(at: file)
                continue
            }
            let values = try? file.resourceValues(forKeys: [.contentModificationDateKey, .fileSizeKey])
            found.append(
                (
                    name, Record(key: key, size: values?.fileSize ?? 0, tick: 0),
                    values?.contentModificationDate ?? .distantPast
                ))
        }
        state.withLock { state in
            for item in found.sorted(by: { $0.date < $1.date }) {
                state.tick += 1
                state.records[item.name] = Record(key: item.record.key, size: item.record.size, tick: state.tick)
                state.totalBytes += item.record.size
            }
        }
        evict()
    }

    deinit {
        close(lockDescriptor)
    }

    static let lockFileName = ".lock"
    static let keyFileName = ".partition-key"

    /// The store's own kinds of file that opening the store checks (its lock and key files are neither).
    enum OwnFile { case entry, temporary }

    /// What `name` is, when it is a name the store gives its files: an entry (`<64 hex digits>.cache`) or an
    /// entry's temporary file (`<entry>.<random>.tmp`); `nil` for any other name.
    static func ownFile(_ name: String) -> OwnFile? {
        let bytes = Array(name.utf8)
        let entryLength = 64 + 6  // the SHA-256 in hex, ".cache"
        guard bytes.count >= entryLength,
            bytes[..<64].allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
            bytes[64..<entryLength].elementsEqual(".cache".utf8)
        else { return nil }
        if bytes.count == entryLength { return .entry }
        // ".<random>.tmp" after the entry's name.
        guard bytes.count > entryLength + 5, bytes[entryLength] == UInt8(ascii: "."), name.hasSuffix(".tmp") else {
            return nil
        }
        return .temporary
    }

    /// Takes the directory's advisory lock, or fails when another store (in any process) holds it.
    private static func lock(_ directory: URL) throws -> Int32 {
        let path = directory.appendingPathComponent(lockFileName).path
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CourierError(
                code: .unsupported, stage: .resolve,
                message: "the cache cannot open its lock file \(path) (errno \(errno))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw CourierError(
                code: .unsupported, stage: .resolve,
                message: "the cache directory \(directory.path) is in use by another HTTPCache, in this process or "
                    + "another; use one cache per directory")
        }
        return descriptor
    }

    /// The directory's partition key: read from `.partition-key`, or made and written there (0600) the first time.
    private static func loadPartitionKey(in directory: URL) throws -> [UInt8] {
        let url = directory.appendingPathComponent(keyFileName)
        if let data = try? Data(contentsOf: url), data.count == 32 { return Array(data) }
        let key = CacheKey.randomPartitionKey()
        try Data(key).write(to: url, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        return key
    }

    func cachedEntry(for key: CacheKey) -> CacheEntry? {
        let name = key.fileName
        let known = state.withLock { state -> Bool in
            guard state.records[name] != nil else { return false }
            state.tick += 1
            state.records[name]?.tick = state.tick
            return true
        }
        guard known else { return nil }
        let url = directory.appendingPathComponent(name)
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            // A file that is gone is forgotten; one that cannot be read now (locked by Data Protection while the
            // device is, no file descriptor left on a loaded server) is a miss and stays for the next lookup.
            if Self.isMissing(error) { drop(name) }
            return nil
        }
        guard let entry = Self.decode(data), entry.key == key else {
            drop(name)  // corrupt, or another key's: never good again
            return nil
        }
        return entry
    }

    /// Whether reading a file failed because there is none.
    private static func isMissing(_ error: any Error) -> Bool {
        if let error = error as? CocoaError {
            return error.code == .fileReadNoSuchFile || error.code == .fileNoSuchFile
        }
        return (error as? POSIXError)?.code == .ENOENT
    }

    @discardableResult
    func keep(_ entry: CacheEntry) -> Bool {
        let name = entry.key.fileName
        guard let data = Self.encode(entry), data.count <= byteLimit else {
            drop(name)
            return false
        }
        guard Self.writeAtomically(data, to: directory.appendingPathComponent(name)) else {
            drop(name)
            return false
        }
        state.withLock { state in
            state.tick += 1
            state.totalBytes -= state.records[name]?.size ?? 0
            state.records[name] = Record(key: entry.key, size: data.count, tick: state.tick)
            state.totalBytes += data.count
        }
        evict()
        return true
    }

    /// Writes `data` whole to a temporary file next to `file`, owner-only from its creation, and renames it into
    /// place; returns whether it did (the temporary file is removed when not).
    private static func writeAtomically(_ data: Data, to file: URL) -> Bool {
        let temporary = file.path + "." + String(UInt64.random(in: 0...UInt64.max), radix: 36) + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        let written = data.withUnsafeBytes { buffer -> Bool in
            guard let base = buffer.baseAddress else { return buffer.isEmpty }
            var offset = 0
            while offset < buffer.count {
                let count = write(descriptor, base + offset, buffer.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        guard close(descriptor) == 0, written, rename(temporary, file.path) == 0 else {
            unlink(temporary)
            return false
        }
        return true
    }

    func removeAll(where predicate: (CacheKey) -> Bool) {
        let names = state.withLock { state in state.records.filter { predicate($0.value.key) }.map(\.key) }
        for name in names { drop(name) }
    }

    var totalBytes: Int { state.withLock { $0.totalBytes } }
    var count: Int { state.withLock { $0.records.count } }

    private func drop(_ name: String) {
        state.withLock { state in
            if let record = state.records.removeValue(forKey: name) { state.totalBytes -= record.size }
        }
        try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
    }

    private func evict() {
        while true {
            let victim = state.withLock { state -> String? in
                guard state.totalBytes > byteLimit else { return nil }
                return state.records.min { $0.value.tick < $1.value.tick }?.key
            }
            guard let victim else { return }
            drop(victim)
        }
    }

    // MARK: - Format

    static func encode(_ entry: CacheEntry) -> Data? {
        let head = Head(
            partition: entry.key.partition,
            url: entry.key.url,
            status: entry.status,
            // A session cookie does not belong in a file that outlives the session: the disk store leaves
            // `Set-Cookie` out (the memory store keeps it, as RFC 9111 §3.1 says).
            headers: entry.headers.filter { $0.name.lowercased() != "set-cookie" }.map { [$0.name, $0.value] },
            requestTime: entry.requestTime.timeIntervalSince1970,
            responseTime: entry.responseTime.timeIntervalSince1970,
            vary: entry.vary
        )
        guard let headData = try? JSONEncoder().encode(head), headData.count <= Int(UInt32.max) else { return nil }
        var checksum = CRC32.checksum(headData)
        checksum = CRC32.checksum(entry.body, continuing: checksum)
        var data = Data(capacity: headerSize + headData.count + entry.body.count)
        data.append(contentsOf: magic)
        append(version, to: &data)
        append(UInt32(headData.count), to: &data)
        append(UInt64(entry.body.count), to: &data)
        append(checksum, to: &data)
        data.append(headData)
        data.append(entry.body)
        return data
    }

    /// The entry in `data`, or `nil` when it is not a complete, intact entry of this format.
    static func decode(_ data: Data) -> CacheEntry? {
        let bytes = [UInt8](data.prefix(headerSize))
        guard bytes.count == headerSize, Array(bytes[0..<4]) == magic, integer(bytes, at: 4, size: 4) == version else {
            return nil
        }
        let headLength = Int(integer(bytes, at: 8, size: 4))
        let bodyLength = integer(bytes, at: 12, size: 8)
        let checksum = UInt32(integer(bytes, at: 20, size: 4))
        guard bodyLength <= UInt64(Int.max - headerSize - headLength),
            data.count == headerSize + headLength + Int(bodyLength)
        else { return nil }
        let start = data.startIndex + headerSize
        let headData = data[start..<(start + headLength)]
        let body = data[(start + headLength)...]
        guard CRC32.checksum(body, continuing: CRC32.checksum(headData)) == checksum,
            let head = try? JSONDecoder().decode(Head.self, from: headData),
            head.headers.allSatisfy({ $0.count == 2 })
        else { return nil }
        return CacheEntry(
            key: CacheKey(partition: head.partition, url: head.url),
            status: head.status,
            headers: head.headers.map { ($0[0], $0[1]) },
            body: Data(body),
            requestTime: Date(timeIntervalSince1970: head.requestTime),
            responseTime: Date(timeIntervalSince1970: head.responseTime),
            vary: head.vary
        )
    }

    /// The key of the entry in `file`, checking the whole file; `nil` when it is not a valid entry.
    private static func readKey(of file: URL) -> CacheKey? {
        guard let data = try? Data(contentsOf: file), let entry = decode(data) else { return nil }
        return entry.key
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to data: inout Data) {
        withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) }
    }

    private static func integer(_ bytes: [UInt8], at offset: Int, size: Int) -> UInt64 {
        bytes[offset..<(offset + size)].reduce(0) { $0 << 8 | UInt64($1) }
    }
}
