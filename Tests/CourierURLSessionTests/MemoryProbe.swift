import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Process measurements for the memory-bound tests.
enum MemoryProbe {
    struct Unavailable: Error {}

    /// The process's resident set size (`VmRSS` in `/proc/self/status`), in bytes.
    static func residentBytes() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let digits = line.filter(\.isNumber)
            if let kibibytes = Int(digits) { return kibibytes * 1024 }
        }
        throw Unavailable()
    }

    /// A loopback port nobody listens on: bound to get an ephemeral number, then closed.
    static func unusedPort() throws -> Int {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw Unavailable() }
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    bind(fd, socketAddress, length) == 0 && getsockname(fd, socketAddress, &length) == 0
                }
            }
            guard bound else { throw Unavailable() }
            return Int(UInt16(bigEndian: address.sin_port))
        #else
            throw Unavailable()
        #endif
    }
}
