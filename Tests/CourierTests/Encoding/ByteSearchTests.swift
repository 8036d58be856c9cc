import Testing

@testable import CourierCore

@Suite("ByteSearch")
struct ByteSearchTests {
    @Test(
        "finds a needle at the start, in the middle and at the end; not a partial one at the end",
        arguments: [
            ("abc", "abcxyz", true), ("abc", "xyabcz", true), ("abc", "xyzabc", true), ("abc", "xyzab", false),
            ("aab", "aaab", true), ("abab", "ababa", true), ("abc", "ab", false), ("", "", true), ("", "x", true),
            ("a", "", false), ("xyz", "xyz", true), ("xyz", "xyy", false),
        ]
    )
    func edges(needle: String, haystack: String, expected: Bool) {
        #expect(ByteSearch.contains(Array(needle.utf8), in: Array(haystack.utf8)) == expected)
    }

    @Test("agrees with the standard library's firstRange(of:) on 2,000 random cases")
    func agreesWithStandardLibrary() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            // A two-letter alphabet makes near-misses (a shared prefix, then a mismatch) common.
            let haystack = (0..<Int.random(in: 0...64, using: &generator)).map { _ in
                UInt8.random(in: 0...1, using: &generator)
            }
            let needle = (0..<Int.random(in: 1...6, using: &generator)).map { _ in
                UInt8.random(in: 0...1, using: &generator)
            }
            // Each case is small, so a failure prints the inputs that reproduce it.
            #expect(ByteSearch.contains(needle, in: haystack) == (haystack.firstRange(of: needle) != nil))
        }
    }

    @Test("a boundary-sized needle in 1 MiB is found wherever it lies")
    func largeHaystack() {
        let needle = Array("courier-0123456789abcdef0123456789abcdef".utf8)
        var haystack = [UInt8](repeating: UInt8(ascii: "c"), count: 1 << 20)
        let foundInFiller = ByteSearch.contains(needle, in: haystack)
        #expect(!foundInFiller)
        for offset in [0, 1 << 19, (1 << 20) - needle.count] {
            var copy = haystack
            copy.replaceSubrange(offset..<offset + needle.count, with: needle)
            let found = ByteSearch.contains(needle, in: copy)
            #expect(found, "at \(offset)")
        }
        // All but the needle's last byte, at the very end.
        haystack.replaceSubrange(haystack.count - needle.count + 1..<haystack.count, with: needle.dropLast())
        let foundPartial = ByteSearch.contains(needle, in: haystack)
        #expect(!foundPartial)
    }
}
