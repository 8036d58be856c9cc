import Testing

@testable import CourierCore

@Suite("Link header (RFC 8288)")
struct LinkHeaderTests {
    @Test(
        "finds the target of a relation across links and field lines",
        arguments: [
            ([#"<https://a.test/2>; rel="next", <https://a.test/9>; rel="last""#], "next", "https://a.test/2"),
            ([#"<https://a.test/9>; rel="last""#, #"<https://a.test/2>; rel=next"#], "next", "https://a.test/2"),
            ([#"<https://a.test/1>; rel="prev first""#], "first", "https://a.test/1"),
            ([#"<https://a.test/2>; REL="Next""#], "next", "https://a.test/2"),
            (
                [#"<https://a.test/x>; title="a, b; rel=next", <https://a.test/2>; rel="next""#], "next",
                "https://a.test/2"
            ),
            ([#"<https://a.test/?a=1,2>; rel="next""#], "next", "https://a.test/?a=1,2"),
        ] as [([String], String, String)])
    func target(values: [String], relation: String, expected: String) {
        #expect(LinkHeader.target(of: values, relation: relation) == expected)
    }

    @Test(
        "no link with the relation, or garbage, gives nil",
        arguments: ["", "garbage", "<https://a.test/1>; rel=prev", "<unterminated; rel=next"])
    func none(value: String) {
        #expect(LinkHeader.target(of: [value], relation: "next") == nil)
    }
}
