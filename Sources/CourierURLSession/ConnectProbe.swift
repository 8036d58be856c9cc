import CourierCore
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether a TCP connection to a host and port can be made right now.
///
/// URLSession reports no "connected" event, so when a request has had no response head for the whole connect
/// timeout, ``ResponseTask`` cannot tell a server that is unreachable (the connect timeout) from one that is
/// connected but slow to answer (which only the idle timeout may end, as on every other transport). It asks this
/// probe: one plain TCP connect, closed at once, made only for requests that have been silent for the connect
/// timeout. A probe that connects means the server is reachable; one that cannot means the connect timeout fired.
enum ConnectProbe {
    /// Where the request to `url` opens its TCP connection: the proxy that `proxies` route it through, else its
    /// origin; `nil` for a URL without a host.
    ///
    /// Under FoundationNetworking, libcurl follows the process's proxy variables on its own (and the transport
    /// refuses a call it would route otherwise), so the request's connection goes to that proxy: probing the
    /// origin there would call a server behind the proxy unreachable (or an unreachable proxy reachable). On Apple
    /// platforms the system's proxy settings are not read here, and the origin is probed.
    static func target(for url: URL, proxies: ProxyOptions) -> (host: String, port: Int)? {
        guard let origin = Origin(url: url) else { return nil }
        if let proxy = try? proxies.endpoint(for: url) {
            return (proxy.host, proxy.port)
        }
        return (origin.host, origin.port)
    }

    /// ``target(for:proxies:)`` with the proxies libcurl follows (none on Apple platforms).
    static func target(for url: URL) -> (host: String, port: Int)? {
        #if canImport(FoundationNetworking)
            target(for: url, proxies: URLSessionTransport.environmentProxies)
        #else
            target(for: url, proxies: .direct)
        #endif
    }

    /// Connects to `host`:`port` within `timeout`; `true` when a connection was established.
    static func canConnect(host: String, port: Int, timeout: Duration) async -> Bool {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: connect(host: host, port: port, timeout: timeout))
            }
        }
    }

    private static func connect(host: String, port: Int, timeout: Duration) -> Bool {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)  // an enum in Glibc's module
        #else
            hints.ai_socktype = SOCK_STREAM  // an Int32 on Darwin, Musl and Android
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        guard getaddrinfo(bare, String(port), &hints, &list) == 0, let first = list else { return false }
        defer { freeaddrinfo(list) }
        let milliseconds = Int32(
            clamping: max(1, timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        )
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if attempt(current.pointee, milliseconds: milliseconds) { return true }
            entry = current.pointee.ai_next
        }
        return false
    }

    private static func attempt(_ address: addrinfo, milliseconds: Int32) -> Bool {
        let fd = socket(address.ai_family, address.ai_socktype, address.ai_protocol)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let flags = fcntl(fd, F_GETFL, 0)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else { return false }
        if Foundation.connect(fd, address.ai_addr, address.ai_addrlen) == 0 { return true }
        guard errno == EINPROGRESS else { return false }
        var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        guard poll(&descriptor, 1, milliseconds) == 1 else { return false }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 else { return false }
        return error == 0
    }
}
