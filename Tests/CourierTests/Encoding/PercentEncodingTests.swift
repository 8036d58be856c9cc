import Testing

@testable import CourierCore

@Suite("PercentEncoding")
struct PercentEncodingTests {
    @Test(arguments: [
        ("../admin", "..%2Fadmin"), ("a/b", "a%2Fb"), ("%2F", "%252F"), ("100%", "100%25"), ("a b", "a%20b"),
        ("\r\n", "%0D%0A"), ("\0", "%00"), ("#", "%23"), ("?", "%3F"), ("a?b#c", "a%3Fb%23c"),
        ("!$&'()*+,;=:@", "!$&'()*+,;=:@"), ("AZaz09-._~", "AZaz09-._~"), ("é", "%C3%A9"), ("", ""),
        ("[x]", "%5Bx%5D"), ("\"<>\\^`{|}", "%22%3C%3E%5C%5E%60%7B%7C%7D"), ("\u{7F}", "%7F"),
    ])
    func pathSegment(input: String, expected: String) {
        #expect(PercentEncoding.encode(input, allowing: .pathSegment) == expected)
    }

    @Test(arguments: [
        ("AZaz09-._~", "AZaz09-._~"), ("a+b", "a%2Bb"), ("x&y=z", "x%26y%3Dz"), (";", "%3B"), (" ", "%20"),
        ("é", "%C3%A9"), ("😀", "%F0%9F%98%80"), ("[]", "%5B%5D"), ("/?#%", "%2F%3F%23%25"),
        ("!$'()*,:@", "%21%24%27%28%29%2A%2C%3A%40"),
    ])
    func unreserved(input: String, expected: String) {
        #expect(PercentEncoding.encode(input, allowing: .unreserved) == expected)
    }

    @Test(arguments: [("a b", "a+b"), ("a+b", "a%2Bb"), ("  ", "++"), ("1 + 1", "1+%2B+1")])
    func spaceAsPlus(input: String, expected: String) {
        #expect(PercentEncoding.encode(input, allowing: .unreserved, spaceAsPlus: true) == expected)
        #expect(PercentEncoding.encode(input, allowing: .pathSegment, spaceAsPlus: true) == expected)
    }

    @Test func encodesSubstringsAndUsesUppercaseHex() {
        let text = "prefix:ÿ/suffix"
        let slice = text.dropFirst(7).prefix(2)
        #expect(PercentEncoding.encode(slice, allowing: .unreserved) == "%C3%BF%2F")
        #expect(PercentEncoding.encode(text[...], allowing: .pathSegment) == "prefix:%C3%BF%2Fsuffix")
    }

    @Test func appendMatchesEncode() {
        var bytes = Array("k=".utf8)
        PercentEncoding.append("a b+é", allowing: .unreserved, spaceAsPlus: true, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "k=a+b%2B%C3%A9")
    }

    @Test func encodingTwiceEncodesThePercentSign() {
        let once = PercentEncoding.encode("a b", allowing: .pathSegment)
        #expect(PercentEncoding.encode(once, allowing: .pathSegment) == "a%2520b")
    }

    @Test(arguments: ["", "abc", "a%2Fb", "%41%7e", "..%2Fadmin", "!$&'()*+,;=:@", "%C3%A9", "x%20y"])
    func validPathSegments(input: String) {
        #expect(PercentEncoding.isValidPercentEncoded(input, allowing: .pathSegment))
    }

    @Test(arguments: ["%2", "%", "a%zz", "%g0", "%0g", "a b", "a/b", "?", "#", "é", "100%", "\r", "\0", "%%41"])
    func invalidPathSegments(input: String) {
        #expect(!PercentEncoding.isValidPercentEncoded(input, allowing: .pathSegment))
    }

    @Test func validityDependsOnTheSet() {
        #expect(PercentEncoding.isValidPercentEncoded("a+b", allowing: .pathSegment))
        #expect(!PercentEncoding.isValidPercentEncoded("a+b", allowing: .unreserved))
        #expect(PercentEncoding.isValidPercentEncoded("a%2Bb", allowing: .unreserved))
    }

    @Test(arguments: [
        ("/users/42", "/users/42"), ("/files/a b", "/files/a%20b"), ("/a%20b/c d", "/a%20b/c%20d"),
        ("/100%/x", "/100%25/x"), ("", ""), ("/a?b#c", "/a%3Fb%23c"), ("/é", "/%C3%A9"), ("a//b/", "a//b/"),
        ("/%2F", "/%2F"), ("/%zz/ok", "/%25zz/ok"), ("/x;y=1:@", "/x;y=1:@"), ("/\r\n", "/%0D%0A"),
    ])
    func wholePaths(input: String, expected: String) {
        #expect(PercentEncoding.encodePath(input) == expected)
    }

    @Test func customSetsNeverAllowPercentSpaceOrControlBytes() {
        let set = PercentEncoding.AllowedCharacters("% \n/ab")
        #expect(set.contains(UInt8(ascii: "/")))
        #expect(set.contains(UInt8(ascii: "a")))
        #expect(!set.contains(UInt8(ascii: "%")))
        #expect(!set.contains(UInt8(ascii: " ")))
        #expect(!set.contains(UInt8(ascii: "\n")))
        #expect(!set.contains(0xC3))
        #expect(PercentEncoding.encode("a/%", allowing: set) == "a/%25")
    }
}
