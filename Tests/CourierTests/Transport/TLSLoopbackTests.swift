import Courier
import Testing

@Suite("TLSOptions.isLoopback")
struct TLSLoopbackTests {
    @Test(
        "loopback for allowsInsecureLoopback: localhost and loopback addresses, never a name DNS could answer",
        arguments: [
            ("localhost", true), ("LOCALHOST.", true), ("127.0.0.1", true), ("127.255.0.9", true), ("::1", true),
            ("[::1]", true), ("api.localhost", false), ("localhost.example.com", false), ("10.0.0.1", false),
            ("128.0.0.1", false), ("example.com", false),
        ])
    func loopback(host: String, expected: Bool) {
        #expect(TLSOptions.isLoopback(host) == expected)
    }
}
