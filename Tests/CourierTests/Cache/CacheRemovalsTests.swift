import Foundation
import Testing

@testable import CourierCore

/// Which removals keep a response fetched before them out of the cache (`HTTPCache.Removals`).
@Suite("Cache: removals and the responses fetched before them")
struct CacheRemovalsTests {
    private static func key(_ path: String) -> CacheKey { CacheKey(partition: "", url: "https://example.com" + path) }

    @Test("a key's removal reaches that key only; a wider one reaches every key; a count the cache never had, all")
    func reach() {
        var removals = HTTPCache.Removals()
        let started = removals.count
        removals.note(.key(Self.key("/a")))
        #expect(!removals.allow(Self.key("/a"), since: started))
        #expect(removals.allow(Self.key("/b"), since: started))
        #expect(removals.allow(Self.key("/a"), since: removals.count))
        #expect(!removals.allow(Self.key("/b"), since: .max))
        removals.note(.url("https://example.com/c"))
        #expect(!removals.allow(Self.key("/b"), since: started))
        #expect(removals.allow(Self.key("/b"), since: removals.count))
    }

    @Test("past keyLimit keys removed alone, they are forgotten for a wide removal: it keeps more out, never less")
    func keyLimit() {
        var removals = HTTPCache.Removals()
        let started = removals.count
        for index in 0..<HTTPCache.Removals.keyLimit { removals.note(.key(Self.key("/\(index)"))) }
        removals.note(.key(Self.key("/0")))
        #expect(removals.allow(Self.key("/other"), since: started))
        #expect(!removals.allow(Self.key("/0"), since: started))
        removals.note(.key(Self.key("/one-more")))
        #expect(!removals.allow(Self.key("/other"), since: started))
        #expect(removals.allow(Self.key("/other"), since: removals.count))
    }
}
