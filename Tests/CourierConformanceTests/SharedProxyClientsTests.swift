import AsyncHTTPClient
import Courier
import Foundation
import NIOCore
import Testing

@testable import CourierAsyncHTTPClient

/// The shared AsyncHTTPClient clients of proxied calls: one per proxy credential, but not one for every credential a
/// process ever used (a proxy whose password is a rotating token).
@Suite("Shared proxy clients")
struct SharedProxyClientsTests {
    /// A configuration no other test uses, so that only this test's clients are counted.
    let configuration = AsyncHTTPClientTransport.Configuration(connectTimeout: .milliseconds(1_234_567))

    /// The proxy at 127.0.0.1:9 (nothing listens there) with the `number`th password.
    func proxy(_ number: Int) -> ProxyOptions.Endpoint {
        ProxyOptions.Endpoint(
            host: "127.0.0.1", port: 9, credentials: .init(username: "courier", password: "token-\(number)"))
    }

    /// Whether `client` was shut down: it then refuses a request at once with `alreadyShutdown` (a live one tries
    /// the proxy, which refuses the connection).
    func isShutDown(_ client: HTTPClient) async -> Bool {
        do {
            _ = try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:9/"), timeout: .seconds(5))
            return false
        } catch let error as HTTPClientError {
            return error == .alreadyShutdown
        } catch {
            return false
        }
    }

    @Test("rotating credentials keep at most maxCredentialsPerProxy clients; one still read is shut down after")
    func rotatingCredentialsAreBounded() async throws {
        // The first credential's response is still being read while twenty more credentials come and go.
        var held: AsyncHTTPClientTransport.ProxyLease? = SharedClients.lease(
            for: configuration, http1Only: false, proxy: proxy(0))
        let first = try #require(held?.client)
        var dropped: [HTTPClient] = []
        for number in 1...20 {
            dropped.append(SharedClients.lease(for: configuration, http1Only: false, proxy: proxy(number)).client)
        }

        var counts = await SharedClients.proxyClients(for: configuration, proxy: proxy(0))
        #expect(counts.live == SharedClients.maxCredentialsPerProxy)
        #expect(counts.retiring == 1)
        #expect(await isShutDown(first) == false, "a client is not shut down under a response that uses it")
        #expect(await isShutDown(dropped[0]), "the least recently used credential's idle client is shut down")
        #expect(await isShutDown(dropped[19]) == false, "the newest credential's client stays")

        // Leasing a kept credential again reuses its client.
        #expect(SharedClients.lease(for: configuration, http1Only: false, proxy: proxy(20)).client === dropped[19])

        held = nil
        counts = await SharedClients.proxyClients(for: configuration, proxy: proxy(0))
        #expect(counts.retiring == 0)
        #expect(await isShutDown(first), "the retired client goes when its last response ends")
    }
}
