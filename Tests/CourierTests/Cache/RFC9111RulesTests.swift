import Foundation
import HTTPTypes
import Testing

@testable import CourierCore

/// RFC 9111's parsing and storage rules, one parameterized test per rule (the section each checks is in its name).
@Suite("Cache: RFC 9111 rules")
struct RFC9111RulesTests {
    private static let now = Date(timeIntervalSince1970: 1_800_000_000)

    private static func entry(_ fields: [(String, String)]) -> CacheEntry {
        CacheEntry(
            key: CacheKey(partition: "", url: "https://example.com/x"), status: 200,
            headers: [("Date", "Fri, 15 Jan 2027 08:00:00 GMT")] + fields, body: Data(), requestTime: now,
            responseTime: now, vary: [:])
    }

    @Test(
        "§5.3: an Expires that is not exactly an HTTP-date means already expired",
        arguments: [
            "Thu, 01 Jan 2099 00:00:00 UTC", "Thu 01 Jan 2099 00:00:00 GMT", "Thu, 01-Jan-2099 00:00:00 GMT",
            "Thu, 01 Jan 2099 00.00.00 GMT", "Thu, 01 Jan 2099 0:00:00 GMT", "Thu,  01 Jan 2099 00:00:00 GMT",
            "Thu, 01 Jan 2099  00:00:00 GMT", "Thu, 01 jan 2099 00:00:00 GMT", "Thu, 1 Jan 2099 00:00:00 GMT",
            "Thu, 01 Jan 99 00:00:00 GMT", "2099-01-01T00:00:00Z", "0", "-1", "",
        ])
    func invalidExpires(value: String) {
        let stored = Self.entry([("Expires", value)])
        #expect(stored.expires == .distantPast)
        #expect(stored.freshnessLifetime == 0)
    }

    @Test("RFC 9110 §5.6.7: the three HTTP-date forms name the same instant")
    func validDates() {
        let expected = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDateParser.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(HTTPDateParser.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(HTTPDateParser.parse("Sun Nov  6 08:49:37 1994") == expected)
        #expect(Self.entry([("Expires", "Fri, 15 Jan 2027 09:00:00 GMT")]).freshnessLifetime == 3600)
    }

    @Test(
        "a day the month does not have is no date (an Expires on 31 February is invalid, so already expired)",
        arguments: ["Thu, 31 Feb 2030 00:00:00 GMT", "Mon, 31 Apr 2030 00:00:00 GMT", "Fri, 29 Feb 2030 00:00:00 GMT"])
    func impossibleDays(text: String) {
        #expect(HTTPDateParser.parse(text) == nil)
        #expect(Self.entry([("Expires", text)]).freshnessLifetime == 0)
    }

    @Test("an HTTP-date written by the cache is an IMF-fixdate that parses back to the same second")
    func formattedDates() {
        #expect(HTTPDateParser.format(Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDateParser.format(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDateParser.format(Date(timeIntervalSince1970: -1)) == "Wed, 31 Dec 1969 23:59:59 GMT")
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<1_000 {
            let date = Date(timeIntervalSince1970: TimeInterval(Int.random(in: 0...4_102_444_800, using: &generator)))
            #expect(HTTPDateParser.parse(HTTPDateParser.format(date)) == date)
        }
    }

    @Test("29 February of a leap year is a date")
    func leapDay() {
        #expect(HTTPDateParser.parse("Tue, 29 Feb 2028 00:00:00 GMT") != nil)
        #expect(HTTPDateParser.parse("Tue, 29 Feb 2000 00:00:00 GMT") != nil)
        #expect(HTTPDateParser.parse("Thu, 29 Feb 2100 00:00:00 GMT") == nil)
    }

    @Test(
        "§5.1: Age takes the first value, ignores one that is not a non-negative integer, caps at 2^31",
        arguments: [
            (["7200"], 7200.0), (["7200, 0"], 7200), (["0, 7200"], 0), (["7200", "0"], 7200), (["0", "7200"], 0),
            (["abc"], 0), (["-5"], 0), (["1.5"], 0), (["  60 "], 60), (["99999999999999999999"], 2_147_483_648),
        ] as [([String], Double)])
    func age(lines: [String], expected: Double) {
        let stored = Self.entry(lines.map { ("Age", $0) })
        #expect(stored.ageValue == expected)
    }

    @Test(
        "§4.2.1, §1.2.2: max-age counts once (its first value), invalid means stale, past 2^31 is 2^31",
        arguments: [
            (["max-age=60"], 60), (["max-age=60, max-age=3600"], 60), (["max-age=3600", "max-age=60"], 3600),
            (["max-age=abc"], 0), (["max-age=-1"], 0), (["max-age=99999999999999999999"], 2_147_483_648),
            (["max-age=\"120\""], 120),
        ] as [([String], Int)])
    func maxAge(lines: [String], expected: Int) {
        let stored = Self.entry(lines.map { ("Cache-Control", $0) })
        #expect(stored.control.maxAge == expected)
        #expect(stored.freshnessLifetime == TimeInterval(expected))
    }

    @Test(
        "§3.1: hop-by-hop fields and those Connection names are not stored; others are, Set-Cookie included",
        arguments: [
            ("Keep-Alive", "timeout=5", false), ("Transfer-Encoding", "chunked", false), ("Upgrade", "h2c", false),
            ("X-Per-Hop", "1", false), ("Set-Cookie", "a=1", true), ("Content-Range", "bytes 0-1/2", true),
            ("ETag", "\"v1\"", true),
        ])
    func storedFields(name: String, value: String, stored: Bool) throws {
        let fieldName = try #require(HTTPField.Name(name))
        var fields: HTTPFields = [.connection: "X-Per-Hop, close"]
        fields[fieldName] = value
        let kept = CacheRules.storedFields(of: HTTPResponse(status: .ok, headerFields: fields))
        #expect(kept.contains { $0.name.lowercased() == name.lowercased() } == stored)
        #expect(!kept.contains { $0.name.lowercased() == "connection" })
    }

    @Test("§5.2.2.4: no-cache=\"field\" keeps the response reusable but never stores the field it names")
    func qualifiedNoCache() {
        let fields: HTTPFields = [.cacheControl: "max-age=60, no-cache=\"X-Secret, X-Other\"", .init("X-Secret")!: "s"]
        let control = CacheControl(fields)
        #expect(!control.noCache)
        #expect(control.noCacheFields == ["x-secret", "x-other"])
        let kept = CacheRules.storedFields(of: HTTPResponse(status: .ok, headerFields: fields))
        #expect(!kept.contains { $0.name.lowercased() == "x-secret" })
        #expect(CacheControl([.cacheControl: "no-cache"]).noCache)
    }

    @Test("§5.2.2.7: private and private=\"field\" responses are stored by a private cache")
    func privateIsStorable() {
        for value in ["private, max-age=60", "private=\"X-User\", max-age=60"] {
            let response = HTTPResponse(status: .ok, headerFields: [.cacheControl: value])
            #expect(CacheRules.isStorable(response, requestControl: CacheControl([:])))
        }
    }

    @Test("§3: a 200 with Content-Range is stored; a 206 never is")
    func partialContent() {
        let full = HTTPResponse(status: .ok, headerFields: [.contentRange: "bytes 0-1/2", .cacheControl: "max-age=60"])
        #expect(CacheRules.isStorable(full, requestControl: CacheControl([:])))
        let partial = HTTPResponse(
            status: .partialContent, headerFields: [.contentRange: "bytes 0-1/2", .cacheControl: "max-age=60"])
        #expect(!CacheRules.isStorable(partial, requestControl: CacheControl([:])))
    }

    @Test("the disk store leaves Set-Cookie out of its files; the rest round-trips")
    func diskStoreDropsSetCookie() throws {
        let stored = Self.entry([("Set-Cookie", "session=secret"), ("ETag", "\"v1\"")])
        let data = try #require(DiskCacheStore.encode(stored))
        #expect(!String(decoding: data, as: UTF8.self).contains("session=secret"))
        let decoded = try #require(DiskCacheStore.decode(data))
        #expect(decoded.headers.map(\.name) == ["Date", "ETag"])
    }

    /// A stored entry's validators, a 304's, and whether the 304 may update the entry.
    struct Identification: Sendable, CustomTestStringConvertible {
        var stored: [(String, String)]
        var notModified: [(String, String)]
        var identified: Bool
        var testDescription: String { "stored \(stored), 304 \(notModified) → \(identified)" }
    }

    @Test(
        "§4.3.4: a 304 updates the stored response its validator identifies, and no other",
        arguments: [
            Identification(stored: [("ETag", "\"a\"")], notModified: [("ETag", "\"a\"")], identified: true),
            Identification(stored: [("ETag", "\"a\"")], notModified: [("ETag", "\"b\"")], identified: false),
            // Strong comparison for a strong validator: a weak stored tag is not the same representation.
            Identification(stored: [("ETag", "W/\"a\"")], notModified: [("ETag", "\"a\"")], identified: false),
            // Weak comparison for a weak one.
            Identification(stored: [("ETag", "\"a\"")], notModified: [("ETag", "W/\"a\"")], identified: true),
            Identification(stored: [("ETag", "W/\"a\"")], notModified: [("ETag", "W/\"a\"")], identified: true),
            Identification(stored: [], notModified: [("ETag", "\"a\"")], identified: false),
            Identification(
                stored: [("Last-Modified", "Fri, 15 Jan 2027 07:00:00 GMT")],
                notModified: [("Last-Modified", "Fri, 15 Jan 2027 07:00:00 GMT")], identified: true),
            Identification(
                stored: [("Last-Modified", "Fri, 15 Jan 2027 07:00:00 GMT")],
                notModified: [("Last-Modified", "Fri, 15 Jan 2027 07:30:00 GMT")], identified: false),
            Identification(
                stored: [("ETag", "\"a\"")], notModified: [("Cache-Control", "max-age=60")], identified: true),
        ])
    func notModifiedIdentifies(_ example: Identification) {
        var head = HTTPResponse(status: .notModified)
        for (name, value) in example.notModified {
            if let name = HTTPField.Name(name) { head.headerFields.append(HTTPField(name: name, value: value)) }
        }
        #expect(Self.entry(example.stored).isIdentified(by: head) == example.identified)
    }
}
