import Foundation
import HTTPTypes

/// The `Cache-Control` directives (RFC 9111 §5.2) a private cache acts on, from every `Cache-Control` line.
///
/// Unknown directives are ignored; a directive with an invalid argument counts as absent, except `max-age` and
/// `s-maxage`, where an invalid value means "stale" (RFC 9111 §4.2.1).
struct CacheControl: Hashable, Sendable {
    var noStore = false
    var noCache = false
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
        let seconds = argument.flatMap { Int($0) }.map { max(0, $0) }
        switch name {
        case "no-store": noStore = true
        case "no-cache": noCache = true
        case "must-revalidate", "proxy-revalidate": mustRevalidate = true
        case "public": isPublic = true
        case "private": isPrivate = true
        case "only-if-cached": onlyIfCached = true
        case "max-age": maxAge = seconds ?? 0
        case "max-stale": maxStale = argument == nil ? Int.max : seconds
        case "min-fresh": minFresh = seconds
        case "stale-while-revalidate": staleWhileRevalidate = seconds
        case "stale-if-error": staleIfError = seconds
        default: break
        }
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
