import Courier
import CourierTestServer
import Foundation
import Testing

/// Row 43: SPKI pin sets {primary, backup}. The matching pin is the lab ROOT's key: AsyncHTTPClient sees no
/// connection's certificates, so it can only enforce pins that name a trust anchor.
extension TLSTarget {
    /// Pins are checked per connection, whatever its protocol: the embedded server over h2, and nginx.
    static let pinTargets: [TLSTarget] = [.embeddedHTTP2, .nginx]
}

extension Conformance.TLSConformanceTests {
    @Test(
        "row 43: a pinned root key with a backup, or the backup alone, connects", arguments: TransportKind.all,
        TLSTarget.pinTargets)
    func pinMatch(transport: TransportKind, target: TLSTarget) async throws {
        _ = try await target.run(on: transport, "pin match") { baseURL, trust, _ in
            let rootPin = try #require(
                target == .nginx ? NginxLab.rootPin : TLSLab.authority.get().root.spkiSHA256Base64)
            let sets = [
                ("pin match: root + backup", [rootPin, TLSLab.unrelatedPin("backup key")]),
                ("pin match: rotated primary, root as backup", [TLSLab.unrelatedPin("rotated-out primary"), rootPin]),
            ]
            for (name, pins) in sets {
                try await tlsCase("\(name) (\(target.name))", on: transport, needs: [.customTrust, .pinning]) {
                    var tls = trust
                    tls.pins = [try TLSOptions.PinSet(host: "localhost", pins: Set(pins))]
                    // Set per server this time (Server.tls), not per client.
                    let client = Client(server: Server(baseURL: baseURL, tls: tls), transport: transport.make())
                    let echo = try await client.send(HTTPSCall<Echo>(path: "/get", query: ["pinned": "yes"]))
                    #expect(echo.args == ["pinned": "yes"])
                    return "ok"
                }
            }
        }
    }

    @Test(
        "row 43: a trusted interceptor whose key is not pinned is pinMismatch, before a byte; after a redirect too",
        arguments: TransportKind.all)
    func pinMismatch(transport: TransportKind) async throws {
        let authority = try TLSLab.authority.get()
        let interceptor = try TLSLab.interceptor.get()
        try await withTLSServer(TestServerTLS(authority: authority)) { server in
            // Both roots are trusted (a device that trusts a MITM proxy's CA); only the interceptor's is pinned,
            // and the server presents the other chain. Without the pin check, the call would succeed.
            let roots = try TLSOptions.Certificate.pem(authority.root.certificatePEM + interceptor.root.certificatePEM)
            let pins: Set = [interceptor.root.spkiSHA256Base64, TLSLab.unrelatedPin("interceptor backup")]
            let tls = TLSOptions(trust: .only(roots), pins: [try TLSOptions.PinSet(host: "localhost", pins: pins)])
            try await tlsCase("pin mismatch (trusted interceptor)", on: transport, needs: [.customTrust, .pinning]) {
                let start = ContinuousClock.now
                let error = try await expectTLSFailure {
                    try await tlsClient(transport.make(), server.baseURL, tls).send(HTTPSBytes(path: "/get"))
                }
                #expect(error?.code == .pinMismatch, "\(String(describing: error))")
                #expect(server.requestCount == 0)
                #expect(attempts(error) == 1, "a pin mismatch is never retried")
                #expect(ContinuousClock.now - start < .seconds(5))
                #expect(error.map { ErrorMessageProvider().message(for: $0) } == TLSLab.secureConnectionSentence)
                return error?.code.description ?? "-"
            }
            // 127.0.0.1 is not pinned; its redirect to localhost is, and must be checked.
            let pinned = server.baseURL.absoluteString
            server.register("GET", "/hop") { _ in
                TestServerResponse(status: 302, headers: [("Location", "\(pinned)/get")], body: [])
            }
            try await tlsCase("pin mismatch after a redirect", on: transport, needs: [.customTrust, .pinning]) {
                let before = server.requestCount
                let client = tlsClient(transport.make(), server.baseURL(host: "127.0.0.1"), tls)
                let error = try await expectTLSFailure { try await client.send(HTTPSBytes(path: "/hop")) }
                #expect(error?.code == .pinMismatch, "\(String(describing: error))")
                #expect(server.requestCount == before + 1, "only /hop reached the server")
                return error?.code.description ?? "-"
            }
        }
    }

    @Test("row 43: pins that name no key at all are refused before a byte is sent", arguments: TransportKind.all)
    func unrelatedPins(transport: TransportKind) async throws {
        let authority = try TLSLab.authority.get()
        try await withTLSServer(TestServerTLS(authority: authority)) { server in
            try await tlsCase("pin mismatch (two unrelated pins)", on: transport, needs: [.customTrust, .pinning]) {
                var tls = try TLSLab.trusting(authority)
                let pins: Set = [TLSLab.unrelatedPin("first"), TLSLab.unrelatedPin("second")]
                tls.pins = [try TLSOptions.PinSet(host: "localhost", pins: pins)]
                let client = tlsClient(transport.make(), server.baseURL, tls)
                // pinMismatch where the chain is checked. AsyncHTTPClient can check only a trust anchor's pin, so
                // it may refuse these as unsupported instead; a transport that declares pinning unsupported must.
                // Either way nothing reaches the server.
                let error: CourierError?
                do {
                    error = try await expectTLSFailure { try await client.send(HTTPSBytes(path: "/get")) }
                } catch let refusal as CourierError where transport == .asyncHTTPClient && refusal.code == .unsupported
                {
                    error = refusal
                }
                let code = error?.code
                #expect(code == .pinMismatch || code == .unsupported, "\(String(describing: error))")
                #expect(server.requestCount == 0)
                return code?.description ?? "-"
            }
        }
    }

    @Test(
        "row 43: a leaf-only pin set is honoured or refused as unsupported, never ignored",
        arguments: TransportKind.all, TLSTarget.pinTargets)
    func leafPin(transport: TransportKind, target: TLSTarget) async throws {
        _ = try await target.run(on: transport, "leaf pin") { baseURL, trust, _ in
            let leafPin = try #require(
                target == .nginx ? NginxLab.leafPin : TLSLab.authority.get().serverCertificate.spkiSHA256Base64)
            let otherLeaf = try TLSLab.interceptor.get().serverCertificate.spkiSHA256Base64
            try await tlsCase("leaf pin (\(target.name))", on: transport, needs: [.customTrust, .pinning]) {
                let send = { (pin: String) in
                    var tls = trust
                    tls.pins = [
                        try TLSOptions.PinSet(host: "localhost", pins: [pin, TLSLab.unrelatedPin("leaf backup")])
                    ]
                    return try await tlsClient(transport.make(), baseURL, tls).send(HTTPSBytes(path: "/get"))
                }
                do {
                    _ = try await send(leafPin)
                } catch let error as CourierError where error.code == .unsupported && transport == .asyncHTTPClient {
                    return "unsupported (\(error.message ?? ""))"
                }
                // Honoured: then another leaf's key must be refused, or the pins were never checked.
                let error = try await expectTLSFailure { try await send(otherLeaf) }
                #expect(error?.code == .pinMismatch, "a wrong leaf pin: \(String(describing: error))")
                return "ok (wrong leaf: \(error?.code.description ?? "-"))"
            }
        }
    }

    @Test("row 43: a pin set needs at least two pins (a backup)")
    func onePinIsRefused() throws {
        let pin = try TLSLab.authority.get().root.spkiSHA256Base64
        #expect(throws: TLSOptions.Error.self) { try TLSOptions.PinSet(host: "localhost", pins: [pin]) }
        #expect(throws: TLSOptions.Error.self) {
            try TLSOptions.PinSet(host: "localhost", pins: [pin, "not base64 of 32 bytes"])
        }
        #expect(throws: Never.self) { try TLSOptions.PinSet(host: "localhost", pins: [pin, TLSLab.unrelatedPin("b")]) }
    }
}
