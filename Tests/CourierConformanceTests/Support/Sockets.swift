import CourierCore
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

    /// A port on 127.0.0.1 that completes connections and never reads from them: a listener that never accepts,
    /// with a small receive buffer, so a client's upload stops once the kernel's buffers are full (a server that
    /// stopped reading the body).
    final class SilentListener: Sendable {
        let port: Int
        private let fd: Int32

        init() throws {
            (fd, port) = try Sockets.listening(receiveBuffer: 16 * 1024, backlog: 8)
        }

        deinit { close(fd) }
    }

    /// A one-request HTTP/1.1 server on 127.0.0.1 that reads the request body at most `bytesPerSecond` (a slow
    /// uplink, or a server that reads slowly), then answers `200 ok` and closes. Runs on a thread of its own.
    final class SlowReader: Sendable {
        let port: Int
        private let listener: Int32
        /// The body bytes read, once the answer went out (`nil` before, or when the exchange failed).
        private let outcome = Outcome()

        /// What the server's thread reports.
        private final class Outcome: Sendable {
            let bodyBytes = LockedBox<Int?>(nil)
        }

        init(bytesPerSecond: Int) throws {
            let (fd, port) = try Sockets.listening(receiveBuffer: 64 * 1024, backlog: 1)
            (self.listener, self.port) = (fd, port)
            Thread.detachNewThread { [outcome] in
                let read = Self.serveOne(listener: fd, bytesPerSecond: bytesPerSecond)
                outcome.bodyBytes.withLock { $0 = read }
            }
        }

        /// The body bytes the server read before it answered, or `nil` if it has not answered.
        var bodyBytesRead: Int? { outcome.bodyBytes.withLock { $0 } }

        deinit {
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
        }

        private static func serveOne(listener: Int32, bytesPerSecond: Int) -> Int? {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return nil }
            defer { close(connection) }
            var head: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            let terminator: [UInt8] = Array("\r\n\r\n".utf8)
            var bodyStart: Int?
            while bodyStart == nil {
                let count = read(connection, &buffer, 4096)
                guard count > 0 else { return nil }
                head += buffer[0..<count]
                bodyStart = head.firstRange(of: terminator)?.upperBound
            }
            guard let bodyStart else { return nil }
            let text = String(decoding: head[..<bodyStart], as: UTF8.self).lowercased()
            guard let line = text.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
                let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
            else { return nil }
            var received = head.count - bodyStart
            let start = ContinuousClock.now
            while received < length {
                // Throttled: the next read waits until the bytes so far fit the rate.
                let due = start + .seconds(Double(received) / Double(bytesPerSecond))
                if ContinuousClock.now < due { Thread.sleep(forTimeInterval: Self.seconds(due - ContinuousClock.now)) }
                let count = read(connection, &buffer, min(buffer.count, length - received))
                guard count > 0 else { return nil }
                received += count
            }
            let answer = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".utf8)
            guard write(connection, answer, answer.count) == answer.count else { return nil }
            return received
        }

        private static func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
        }
    }

    struct SocketError: Error, CustomStringConvertible {
        let description: String
    }

    /// A listener on 127.0.0.1 whose connections have a receive buffer of `receiveBuffer` bytes.
    static func listening(receiveBuffer: Int32, backlog: Int32) throws -> (Int32, Int) {
        let (fd, port) = try bound()
        var size = receiveBuffer
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        guard listen(fd, backlog) == 0 else {
            close(fd)
            throw SocketError(description: "listen() failed: \(errno)")
        }
        return (fd, port)
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
