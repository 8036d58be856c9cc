import Foundation
import Testing

@testable import CourierCore

/// RFC 3986 §5.4: every example of reference resolution, against the RFC's base URI `http://a/b/c/d;p?q`.
@Suite("Redirects: RFC 3986 §5.4 reference resolution")
struct RedirectResolutionTests {
    static let base = URL(string: "http://a/b/c/d;p?q")!  // a literal: it parses

    /// §5.4.1 "Normal Examples".
    static let normal: [(String, String)] = [
        ("g:h", "g:h"), ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"),
        ("/g", "http://a/g"), ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"),
        ("#s", "http://a/b/c/d;p?q#s"), ("g#s", "http://a/b/c/g#s"), ("g?y#s", "http://a/b/c/g?y#s"),
        (";x", "http://a/b/c/;x"), ("g;x", "http://a/b/c/g;x"), ("g;x?y#s", "http://a/b/c/g;x?y#s"),
        ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"), ("./", "http://a/b/c/"), ("..", "http://a/b/"),
        ("../", "http://a/b/"), ("../g", "http://a/b/g"), ("../..", "http://a/"), ("../../", "http://a/"),
        ("../../g", "http://a/g"),
    ]

    /// §5.4.2 "Abnormal Examples" (`http:g` is checked on its own: the RFC allows two answers).
    static let abnormal: [(String, String)] = [
        ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"), ("/./g", "http://a/g"),
        ("/../g", "http://a/g"), ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"), ("g..", "http://a/b/c/g.."),
        ("..g", "http://a/b/c/..g"), ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"),
        ("g/./h", "http://a/b/c/g/h"), ("g/../h", "http://a/b/c/h"), ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
        ("g;x=1/../y", "http://a/b/c/y"), ("g?y/./x", "http://a/b/c/g?y/./x"), ("g?y/../x", "http://a/b/c/g?y/../x"),
        ("g#s/./x", "http://a/b/c/g#s/./x"), ("g#s/../x", "http://a/b/c/g#s/../x"),
    ]

    /// §5.2.2 applies `remove_dot_segments` to absolute references too.
    static let absoluteWithDots: [(String, String)] = [
        ("http://a/b/c/../g", "http://a/b/g"), ("http://a/./g/../h", "http://a/h"), ("http://x/../../y", "http://x/y"),
    ]

    @Test("§5.4.1 normal examples", arguments: normal)
    func normalExamples(reference: String, expected: String) {
        #expect(RedirectDecision.resolve(reference, against: Self.base)?.absoluteString == expected)
    }

    @Test("§5.4.2 abnormal examples", arguments: abnormal)
    func abnormalExamples(reference: String, expected: String) {
        #expect(RedirectDecision.resolve(reference, against: Self.base)?.absoluteString == expected)
    }

    @Test("§5.4.2 `http:g`: the strict answer or the backward-compatible one")
    func sameSchemeWithoutAuthority() {
        let resolved = RedirectDecision.resolve("http:g", against: Self.base)?.absoluteString
        #expect(resolved == "http:g" || resolved == "http://a/b/c/g", "\(String(describing: resolved))")
    }

    @Test("an absolute reference loses its dot segments", arguments: absoluteWithDots)
    func absoluteReferences(reference: String, expected: String) {
        #expect(RedirectDecision.resolve(reference, against: Self.base)?.absoluteString == expected)
    }

    @Test("remove_dot_segments, §5.2.4's own walk-throughs")
    func removeDotSegments() {
        #expect(RedirectDecision.removingDotSegments("/a/b/c/./../../g") == "/a/g")
        #expect(RedirectDecision.removingDotSegments("mid/content=5/../6") == "mid/6")
        #expect(RedirectDecision.removingDotSegments("/b/c/") == "/b/c/")
    }
}
