import Courier
import Foundation
import NIOCore
import Testing

@testable import CourierAsyncHTTPClient

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How AsyncHTTPClientTransport names failures no loopback server can cause on demand.
@Suite("AsyncHTTPClient error translation")
struct AHCErrorTranslationTests {
    /// A connection attempt that times out arrives as `NIOConnectionError`; an `IOError` with `ETIMEDOUT` comes from
    /// a connection already made whose peer stopped acknowledging (TCP's retransmission or keep-alive timeout), when
    /// the request may have been sent: never `connectTimeout`, which says it was not.
    @Test("a TCP timeout on a connected socket is a lost connection, not connectTimeout")
    func tcpTimeoutOnceConnected() {
        let timeouts = AsyncHTTPClientTransport.Timeouts(connect: .seconds(10), idle: .seconds(60))
        let error = IOError(errnoCode: ETIMEDOUT, reason: "read(descriptor:pointer:size:)")
        let beforeHead = AsyncHTTPClientTransport.translate(error, phase: .head, timeouts: timeouts) as? CourierError
        let inBody = AsyncHTTPClientTransport.translate(error, phase: .body, timeouts: timeouts) as? CourierError
        #expect(beforeHead?.code == .connectionReset, "\(String(describing: beforeHead))")
        #expect(inBody?.code == .truncatedResponse, "\(String(describing: inBody))")
        #expect(beforeHead?.message?.contains("stopped acknowledging") == true)
    }
}
