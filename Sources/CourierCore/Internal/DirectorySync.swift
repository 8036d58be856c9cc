#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Flushes the directory entry of a rename to disk (best effort): after `rename(2)` of a file flushed with `fsync`,
/// a crash can still lose the new name until its directory is flushed too.
func synchronizeDirectory(_ path: String) {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else { return }
    _ = fsync(descriptor)
    close(descriptor)
}
