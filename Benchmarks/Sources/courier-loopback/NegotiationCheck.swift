import AsyncHTTPClient
import Courier
import Foundation
import NIOCore
import NIOFoundationCompat

/// What one TLS server negotiated by ALPN over the whole run, read after the matrix from its
/// `/loopback/negotiated` route (see ``EmbeddedServers``): the proof that the `h2` rows were HTTP/2 and the
/// `https` rows HTTP/1.1.
struct NegotiationCheck: Sendable {
    /// The server's protocol.
    let wire: WireProtocol
    /// Its connections per ALPN identifier, the check's own connection included; `nil` when not read.
    let counts: [String: Int]?
    /// Why the counts could not be read.
    let error: String?

    /// Whether every connection negotiated what the protocol's column claims.
    var isExpected: Bool {
        guard let counts, let expected = wire.expectedApplicationProtocol else { return false }
        return counts.keys.allSatisfy { $0 == expected.rawValue } && (counts[expected.rawValue] ?? 0) > 0
    }

    /// Reads the counts of every TLS server in `protocols`, with a one-connection raw AsyncHTTPClient that offers
    /// the same HTTP versions as the measured clients.
    ///
    /// - Returns: One check per TLS protocol, in the order of `protocols`.
    static func run(host: ServerHost, protocols: [WireProtocol]) async -> [NegotiationCheck] {
        var checks: [NegotiationCheck] = []
        for wire in protocols where wire.isSecure {
            guard let endpoint = host.endpoints[wire] else {
                checks.append(NegotiationCheck(wire: wire, counts: nil, error: "no server"))
                continue
            }
            let url = endpoint.baseURL.absoluteString + EmbeddedServers.negotiatedPath
            do {
                let http = RawAHCLoopbackClient.makeHTTPClient(connections: 1, tls: try endpoint.clientTLS())
                let outcome: Result<[String: Int], any Error>
                do {
                    outcome = .success(try await read(url, with: http))
                } catch {
                    outcome = .failure(error)
                }
                try? await http.shutdown()
                checks.append(NegotiationCheck(wire: wire, counts: try outcome.get(), error: nil))
            } catch {
                checks.append(NegotiationCheck(wire: wire, counts: nil, error: "\(error)"))
            }
        }
        return checks
    }

    /// `GET url`, decoded as the route's counts.
    private static func read(_ url: String, with http: HTTPClient) async throws -> [String: Int] {
        let response = try await http.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 16)
        guard response.status == .ok else { throw LoopbackError.unexpectedStatus(Int(response.status.code)) }
        return try JSONDecoder().decode([String: Int].self, from: body)
    }
}
