import Courier
import Foundation
import Testing

/// The digests the cache relies on, against published test vectors.
@Suite("SHA-256 and CRC-32")
struct DigestTests {
    @Test(
        "SHA-256 matches FIPS 180-4 vectors",
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
        ])
    func sha256(input: String, digest: String) {
        #expect(SHA256.hex(input) == digest)
    }

    @Test("SHA-256 of a million 'a's (multi-block)")
    func sha256Long() {
        #expect(
            SHA256.hex(String(repeating: "a", count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("CRC-32 check value, and continuing over two parts equals one pass")
    func crc32() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        let whole = CRC32.checksum(Array("hello, world".utf8))
        #expect(CRC32.checksum(Array(", world".utf8), continuing: CRC32.checksum(Array("hello".utf8))) == whole)
    }
}
