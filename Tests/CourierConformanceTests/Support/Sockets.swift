import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Loopback ports that fail in a known way, made with plain sockets (no sleeps, nothing beyond 127.0.0.1).
enum Sockets {
    /// A port on 127.0.0.1 that refuses connections: bound (so no one else takes it) but not listening.
    final class RefusingPort: Sendable {
        let port: Int
        private let fd: Int32

        init() throws {
            (fd, port) = try Sockets.bound()
        }

        deinit { close(fd) }
    }

    /// A port on 127.0.0.1 whose SYNs go unanswered: a listener with a backlog of one whose accept queue is kept
    /// full, so the kernel drops further connection attempts and a client's connect never completes.
    final class BlackholePort: Sendable {
        let port: Int
        private let fds: [Int32]

        /// `nil` when this machine answers such connects anyway (then the test says so and skips).
        init?() throws {
            let (listener, port) = try Sockets.bound()
            guard listen(listener, 0) == 0 else {
                close(listener)
                return nil
            }
            var fillers: [Int32] = []
            for _ in 0..<3 {
                fillers.append(Sockets.connectNonBlocking(port: port))
            }
            self.port = port
            self.fds = [listener] + fillers
            guard !Sockets.canConnect(port: port, milliseconds: 300) else { return nil }
        }

        deinit {
            for fd in fds where fd >= 0 { close(fd) }
        }
    }

    struct SocketError: Error, CustomStringConvertible {
        let description: String
    }

    static func bound() throws -> (Int32, Int) {
        #if canImport(Darwin)
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #else
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard fd >= 0 else { throw SocketError(description: "socket() failed: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            close(fd)
            throw SocketError(description: "bind() failed: \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    static func connectNonBlocking(port: Int) -> Int32 {
        #if canImport(Darwin)
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #else
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard fd >= 0 else { return -1 }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return fd
    }

    /// Whether a fresh connection to `port` completes within `milliseconds`.
    static func canConnect(port: Int, milliseconds: Int32) -> Bool {
        let fd = connectNonBlocking(port: port)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        guard poll(&descriptor, 1, milliseconds) == 1 else { return false }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        return error == 0
    }
}
