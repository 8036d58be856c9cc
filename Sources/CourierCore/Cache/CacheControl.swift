import Foundation
import HTTPTypes

/// The `Cache-Control` directives (RFC 9111 §5.2) a private cache acts on, from every `Cache-Control` line.
///
/// Unknown directives are ignored; a directive with an invalid argument counts as absent, except `max-age` and
/// `s-maxage`, where an invalid value means "stale" (RFC 9111 §4.2.1). A directive given twice counts once, with its
/// first value (§4.2.1); a number past 2^31 is 2^31 (§1.2.2).
struct CacheControl: Hashable, Sendable {
    var noStore = false
    /// Unqualified `no-cache`: revalidate before every reuse.
    var noCache = false
    /// The fields a qualified `no-cache="a, b"` names (lowercase): they are not reused without revalidation, so the
    /// cache does not store them (RFC 9111 §5.2.2.4).
    var noCacheFields: [String] = []
    var mustRevalidate = false
    var isPublic = false
    var isPrivate = false
    var onlyIfCached = false
    var maxAge: Int?
    var maxStale: Int?
    var minFresh: Int?
    var staleWhileRevalidate: Int?
    var staleIfError: Int?

    /// The directives of `fields`; `Pragma: no-cache` counts as `no-cache` when there is no `Cache-Control`.
    init(_ fields: HTTPFields) {
        let lines = fields[values: .cacheControl]
        if lines.isEmpty {
            noCache = fields.contains {
                $0.name.canonicalName == "pragma" && $0.value.lowercased().contains("no-cache")
            }
            return
        }
        for line in lines {
            for directive in Self.split(line) {
                apply(name: directive.name, argument: directive.argument)
            }
        }
    }

    private mutating func apply(name: String, argument: String?) {
        let seconds = argument.flatMap(Self.deltaSeconds)
        switch name {
        case "no-store": noStore = true
        case "no-cache":
            if let argument {
                noCacheFields += argument.split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespaces).lowercased()
                }.filter { !$0.isEmpty }
            } else {
                noCache = true
            }
        // `proxy-revalidate` is `must-revalidate` for shared caches only (RFC 9111 §5.2.2.8): not this one.
        case "must-revalidate": mustRevalidate = true
        case "public": isPublic = true
        // A private cache may store a `private` response, and `private="field"` limits shared caches only.
        case "private": isPrivate = true
        case "only-if-cached": onlyIfCached = true
        case "max-age": if maxAge == nil { maxAge = seconds ?? 0 }
        case "max-stale": if maxStale == nil { maxStale = argument == nil ? Int.max : seconds }
        case "min-fresh": if minFresh == nil { minFresh = seconds }
        case "stale-while-revalidate": if staleWhileRevalidate == nil { staleWhileRevalidate = seconds }
        case "stale-if-error": if staleIfError == nil { staleIfError = seconds }
        default: break
        }
    }

    /// The greatest delta-seconds a cache needs (RFC 9111 §1.2.2).
    static let maximumDeltaSeconds = 2_147_483_648

    /// `delta-seconds` (RFC 9111 §1.2.2): one or more ASCII digits, capped at 2^31; anything else is `nil`.
    static func deltaSeconds(_ text: String) -> Int? {
        guard !text.isEmpty else { return nil }
        var value = 0
        for byte in text.utf8 {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = min(maximumDeltaSeconds, value * 10 + Int(byte - UInt8(ascii: "0")))
        }
        return value
    }

    /// Splits one header line into lowercase directive names and unquoted arguments.
    static func split(_ line: String) -> [(name: String, argument: String?)] {
        var result: [(name: String, argument: String?)] = []
        var current = ""
        var inQuotes = false
        func flush() {
            let trimmed = current.trimmingCharacters(in: .whitespaces)
            current = ""
            guard !trimmed.isEmpty else { return }
            if let equals = trimmed.firstIndex(of: "=") {
                let name = trimmed[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
                var value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                    value = String(value.dropFirst().dropLast())
                }
                result.append((name, value))
            } else {
                result.append((trimmed.lowercased(), nil))
            }
        }
        for character in line {
            if character == "\"" { inQuotes.toggle() }
            if character == ",", !inQuotes {
                flush()
            } else {
                current.append(character)
            }
        }
        flush()
        return result
    }
}
