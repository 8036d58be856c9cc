import Foundation
import HTTPTypes

/// Reads the RFC 8288 `Link` header: `<https://api.example.com/items?page=2>; rel="next", <…>; rel="last"`.
enum LinkHeader {
    /// The `Link` field name (a valid token, so never `nil`).
    static let name = HTTPField.Name("Link")

    /// The target of the first link whose `rel` includes `relation` (case-insensitive), across all field lines.
    static func target(of values: [String], relation: String) -> String? {
        let wanted = relation.lowercased()
        for value in values {
            for link in links(in: value) where link.relations.contains(wanted) {
                return link.target
            }
        }
        return nil
    }

    /// The links in one field value, each with its lowercased relation types.
    static func links(in value: String) -> [(target: String, relations: [String])] {
        var links: [(target: String, relations: [String])] = []
        var rest = Substring(value)
        while let open = rest.firstIndex(of: "<") {
            guard let close = rest[open...].firstIndex(of: ">") else { break }
            let target = String(rest[rest.index(after: open)..<close]).trimmingCharacters(in: .whitespaces)
            rest = rest[rest.index(after: close)...]
            // The parameters run to the next comma outside a quoted string.
            var parameters = ""
            var quoted = false
            var escaped = false
            var end = rest.endIndex
            for index in rest.indices {
                let character = rest[index]
                if escaped {
                    escaped = false
                } else if quoted && character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    quoted.toggle()
                } else if character == "," && !quoted {
                    end = index
                    break
                }
                parameters.append(character)
            }
            rest = end == rest.endIndex ? rest[end...] : rest[rest.index(after: end)...]
            links.append((target, relations(in: parameters)))
        }
        return links
    }

    /// The space-separated relation types of a link's `rel` parameter, lowercased.
    private static func relations(in parameters: String) -> [String] {
        for parameter in splitOutsideQuotes(parameters) {
            let parts = parameter.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "rel" else {
                continue
            }
            let value = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: " \t\""))
            return value.lowercased().split(separator: " ").map(String.init)
        }
        return []
    }

    /// `text` split at semicolons that are not inside a quoted string.
    private static func splitOutsideQuotes(_ text: String) -> [Substring] {
        var parts: [Substring] = []
        var start = text.startIndex
        var quoted = false
        var escaped = false
        for index in text.indices {
            let character = text[index]
            if escaped {
                escaped = false
            } else if quoted && character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == ";" && !quoted {
                parts.append(text[start..<index])
                start = text.index(after: index)
            }
        }
        parts.append(text[start...])
        return parts
    }

    /// Refuses a link that is not http(s), carries userinfo, or downgrades https to http.
    static func check(_ url: URL, from page: URL?) throws {
        let scheme = url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https", url.host != nil else {
            throw invalid("the next-page link is not an http or https URL")
        }
        guard url.user == nil, url.password == nil else {
            throw invalid("the next-page link carries userinfo (user:password@)")
        }
        if page?.scheme?.lowercased() == "https" && scheme == "http" {
            throw invalid("the next-page link goes from https to http")
        }
    }

    private static func invalid(_ message: String) -> CourierError {
        CourierError(code: .invalidURL, stage: .resolve, message: message)
    }
}
