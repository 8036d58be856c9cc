import Courier
import Foundation
import Testing

/// Reliability row 15: every policy decision compares hosts in one canonical form.
@Suite("Host names")
struct HostNameTests {
    @Test(
        "case, a trailing dot, IDNA dots and Unicode labels are canonicalised",
        arguments: [
            ("API.Example.com", "api.example.com"),
            ("api.example.com.", "api.example.com"),
            ("api\u{3002}example\u{3002}com", "api.example.com"),
            ("api\u{FF0E}example\u{FF61}com", "api.example.com"),
            ("bücher.example", "xn--bcher-kva.example"),
            ("MÜNCHEN.de", "xn--mnchen-3ya.de"),
            ("[::1]", "::1"),
        ])
    func canonical(input: String, expected: String) {
        #expect(HostName.canonical(input) == expected)
    }

    @Test("origins compare canonical hosts: same origin whatever the spelling, never a look-alike")
    func origins() throws {
        let url = try #require(URL(string: "https://api.example.com/v1"))
        let plain = try #require(Origin(url: url))
        #expect(Origin(scheme: "HTTPS", host: "API.Example.com.", port: 443) == plain)
        #expect(Origin(scheme: "https", host: "api\u{3002}example\u{3002}com") == plain)
        #expect(Origin(scheme: "https", host: "api.example.com.evil.test") != plain)
        #expect(Origin(scheme: "https", host: "аpi.example.com") != plain)  // Cyrillic "а"
    }

    @Test("pin sets match canonical hosts, and wildcards only the labels they say")
    func pins() throws {
        let pins: Set<String> = [
            Data(repeating: 1, count: 32).base64EncodedString(), Data(repeating: 2, count: 32).base64EncodedString(),
        ]
        let options = TLSOptions(pins: [
            try TLSOptions.PinSet(host: "API.Example.com.", pins: pins),
            try TLSOptions.PinSet(host: "*.cdn.example.com", pins: pins),
        ])
        #expect(options.pinSet(for: "api.example.com") != nil)
        #expect(options.pinSet(for: "api\u{3002}example\u{3002}com.") != nil)
        #expect(options.pinSet(for: "img.cdn.example.com") != nil)
        #expect(options.pinSet(for: "a.b.cdn.example.com") == nil)
        #expect(options.pinSet(for: "api.example.com.evil.test") == nil)
        #expect(throws: TLSOptions.Error.self) {
            try TLSOptions.PinSet(host: "api.example.com", pins: [pins.sorted()[0]])
        }
    }

    @Test("a **. pin set covers the domain itself and every depth below it, not a lookalike")
    func pinsAnyDepth() throws {
        let pins: Set<String> = [
            Data(repeating: 1, count: 32).base64EncodedString(), Data(repeating: 2, count: 32).base64EncodedString(),
        ]
        let options = TLSOptions(pins: [try TLSOptions.PinSet(host: "**.example.com", pins: pins)])
        for host in ["example.com", "EXAMPLE.com.", "api.example.com", "a.b.example.com"] {
            #expect(options.pinSet(for: host) != nil, "\(host)")
        }
        for host in ["badexample.com", "example.com.evil.test", "com", "xample.com"] {
            #expect(options.pinSet(for: host) == nil, "\(host)")
        }
    }

    @Test(
        "a pinned host that is not a name, an address or a pattern throws instead of pinning nothing",
        arguments: [
            "api.example.com:8443", "https://api.example.com", "api.*.com", "*api.example.com", "*", "**.", "",
            "api.example.com/v1", "*.[::1]",
        ])
    func pinHostMustMatchSomething(host: String) throws {
        let pins: Set<String> = [
            Data(repeating: 1, count: 32).base64EncodedString(), Data(repeating: 2, count: 32).base64EncodedString(),
        ]
        #expect(throws: TLSOptions.Error.self) { try TLSOptions.PinSet(host: host, pins: pins) }
    }

    @Test("a pinned IP address is taken, with or without brackets", arguments: ["10.0.0.1", "[::1]", "fd00::5"])
    func pinIPAddress(host: String) throws {
        let pins: Set<String> = [
            Data(repeating: 1, count: 32).base64EncodedString(), Data(repeating: 2, count: 32).base64EncodedString(),
        ]
        let options = TLSOptions(pins: [try TLSOptions.PinSet(host: host, pins: pins)])
        #expect(options.pinSet(for: host) != nil)
    }
}
