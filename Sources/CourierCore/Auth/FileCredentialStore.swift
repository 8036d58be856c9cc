public import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A ``CredentialStore`` that keeps the credential as JSON in a file only its owner can read (mode 0600).
///
/// ``save(_:)`` is atomic: it writes a temporary file in the same directory (created with mode 0600 from the
/// start, so the tokens are never readable by others even for a moment), flushes it to disk, and renames it over
/// the old file, so a crash leaves either the old or the new credential, never half of one. The directory is
/// created (mode 0700) when missing. A file that cannot be decoded fails ``load()`` with
/// ``CourierError/Code/credentialStoreFailed``; the error never quotes the file's contents.
///
/// On Apple platforms prefer `KeychainCredentialStore` (Apple only); this store suits Linux services and command-line tools.
///
/// ```swift
/// let store = FileCredentialStore(url: URL(fileURLWithPath: "/var/lib/myapp/credential.json"))
/// ```
public struct FileCredentialStore: CredentialStore {
    /// The file the credential is kept in.
    public let url: URL

    /// Creates a store for the file at `url` (which need not exist yet).
    public init(url: URL) {
        self.url = url
    }

    /// Reads and decodes the file; `nil` when it does not exist.
    ///
    /// - Throws: ``CourierError/Code/credentialStoreFailed`` when the file cannot be read or decoded.
    public func load() async throws -> Credential? {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            if !FileManager.default.fileExists(atPath: url.path) { return nil }
            throw Self.failure("could not read the credential file at \(url.path)", underlying: error)
        }
        do {
            return try JSONDecoder().decode(Credential.self, from: data)
        } catch let error as DecodingError {
            throw Self.failure(
                "the credential file at \(url.path) is corrupt (\(Self.summary(of: error))); sign in again"
            )
        } catch {
            throw Self.failure("the credential file at \(url.path) is corrupt; sign in again")
        }
    }

    /// Writes `credential` atomically with mode 0600.
    ///
    /// - Throws: ``CourierError/Code/credentialStoreFailed`` when the directory or file cannot be written.
    public func save(_ credential: Credential) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(credential)
        } catch {
            throw Self.failure("could not encode the credential")
        }
        let directory = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(
                at: directory,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        } catch {
            throw Self.failure("could not create the directory \(directory.path)", underlying: error)
        }
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        try Self.write(data, toNewFileAt: temporary.path)
        guard rename(temporary.path, url.path) == 0 else {
            let code = errno
            unlink(temporary.path)
            throw Self.failure("could not replace \(url.path): \(Self.describe(errno: code))")
        }
        synchronizeDirectory(directory.path)
        removeLeftovers()
    }

    /// Deletes the file, and this store's temporary files older than a minute (a save that crashed before its
    /// rename; a younger one may be another process's save in progress); succeeds when there is none. A save
    /// removes such leftovers too.
    ///
    /// - Throws: ``CourierError/Code/credentialStoreFailed`` when it exists and cannot be deleted.
    public func clear() async throws {
        removeLeftovers()
        guard unlink(url.path) == 0 || errno == ENOENT else {
            throw Self.failure("could not delete \(url.path): \(Self.describe(errno: errno))")
        }
    }

    /// How old a temporary file must be to count as a crashed save's (a save renames its own within milliseconds;
    /// a younger one may be another process's save in progress).
    static let leftoverAge: TimeInterval = 60

    /// Deletes this store's temporary files (`.<name>.<UUID>.tmp`) older than ``leftoverAge`` (best effort): each
    /// holds a credential, which a sign-out must not leave on disk.
    private func removeLeftovers() {
        let directory = url.deletingLastPathComponent()
        let prefix = ".\(url.lastPathComponent)."
        let manager = FileManager.default
        guard let names = try? manager.contentsOfDirectory(atPath: directory.path) else { return }
        let cutoff = Date().addingTimeInterval(-Self.leftoverAge)
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".tmp") {
            let path = directory.appendingPathComponent(name).path
            guard let modified = (try? manager.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
                modified < cutoff
            else { continue }
            unlink(path)
        }
    }

    /// Creates `path` exclusively with mode 0600, writes `data`, and flushes it to disk.
    private static func write(_ data: Data, toNewFileAt path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            throw failure("could not create \(path): \(describe(errno: errno))")
        }
        var failed: Int32?
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count, let base = buffer.baseAddress {
                let written = systemWrite(descriptor, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failed = errno
                    return
                }
                offset += written
            }
        }
        if failed == nil, flush(descriptor) != 0 { failed = errno }
        close(descriptor)
        if let failed {
            unlink(path)
            throw failure("could not write \(path): \(describe(errno: failed))")
        }
    }

    /// Flushes a file to the disk: on Darwin `F_FULLFSYNC`, as its `fsync(2)` leaves the data in the drive's cache
    /// (and `fsync` where the file system has no full flush); elsewhere `fsync`.
    private static func flush(_ descriptor: Int32) -> Int32 {
        #if canImport(Darwin)
            if fcntl(descriptor, F_FULLFSYNC) == 0 { return 0 }
        #endif
        return fsync(descriptor)
    }

    private static func describe(errno code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// The kind and coding path of a decoding error, without any value from the file.
    private static func summary(of error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map(\.stringValue).joined(separator: ".")
        }
        switch error {
        case .dataCorrupted(let context):
            return "not valid JSON" + (path(context).isEmpty ? "" : " at \(path(context))")
        case .keyNotFound(let key, _): return "missing \(key.stringValue)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context): return "wrong type at \(path(context))"
        @unknown default: return "undecodable"
        }
    }

    private static func failure(_ message: String, underlying: (any Error)? = nil) -> CourierError {
        CourierError(code: .credentialStoreFailed, stage: .adapt, message: message, underlyingError: underlying)
    }
}

/// `write(2)`, named apart from the store's own `write` method.
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Darwin)
        Darwin.write(descriptor, buffer, count)
    #elseif canImport(Glibc)
        Glibc.write(descriptor, buffer, count)
    #elseif canImport(Musl)
        Musl.write(descriptor, buffer, count)
    #endif
}
