#if TestServer
    import Foundation

    /// Conditional and credential routes: `/cache`, `/cache/{n}`, `/etag/{etag}`, `/basic-auth/{user}/{passwd}`,
    /// `/hidden-basic-auth/{user}/{passwd}`, `/bearer`, `/cookies`, `/cookies/set`, `/cookies/delete`.
    enum AuthAndCacheRoutes {
        static func handle(_ name: Substring, _ context: RouteContext) async throws -> Disposition {
            let request = context.request
            let getFields: [EchoRoutes.Field] = [.url, .args, .headers, .origin]
            switch name {
            case "cache":
                if let seconds = context.arguments.first.flatMap({ Int($0) }) {
                    let headers = [("Cache-Control", "public, max-age=\(seconds)")]
                    return try await context.json(EchoRoutes.dictionary(context, getFields), headers: headers)
                }
                if request.header("If-Modified-Since") != nil || request.header("If-None-Match") != nil {
                    return try await context.status(304)
                }
                let headers = [
                    ("Last-Modified", HTTPDate.format(Date())),
                    ("ETag", UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()),
                ]
                return try await context.json(EchoRoutes.dictionary(context, getFields), headers: headers)
            case "etag":
                let etag = FormDecoding.percentDecode(context.arguments.first ?? "", plusIsSpace: false)
                let ifNoneMatch = entityTags(request.header("If-None-Match"))
                let ifMatch = entityTags(request.header("If-Match"))
                if !ifNoneMatch.isEmpty {
                    if ifNoneMatch.contains(etag) || ifNoneMatch.contains("*") {
                        return try await context.status(304, headers: [("ETag", etag)])
                    }
                } else if !ifMatch.isEmpty, !ifMatch.contains(etag), !ifMatch.contains("*") {
                    return try await context.status(412)
                }
                return try await context.json(EchoRoutes.dictionary(context, getFields), headers: [("ETag", etag)])
            case "basic-auth", "hidden-basic-auth":
                return try await basicAuth(context, hidden: name == "hidden-basic-auth")
            case "bearer":
                let authorization = request.header("Authorization") ?? ""
                guard authorization.hasPrefix("Bearer ") else {
                    return try await context.status(401, headers: [("WWW-Authenticate", "Bearer")])
                }
                let token = String(authorization.dropFirst("Bearer ".count))
                return try await context.json(["authenticated": true, "token": .string(token)])
            default:
                return try await cookies(context)
            }
        }

        /// httpbin's `parse_multi_value_header`: comma-separated tags, `W/` and quotes removed.
        static func entityTags(_ header: String?) -> [String] {
            guard let header else { return [] }
            return header.split(separator: ",").map { item in
                var tag = item.trimmingCharacters(in: .whitespaces)
                if tag.hasPrefix("W/") { tag = String(tag.dropFirst(2)) }
                return tag.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }

        private static func basicAuth(_ context: RouteContext, hidden: Bool) async throws -> Disposition {
            let user = FormDecoding.percentDecode(context.arguments.first ?? "", plusIsSpace: false)
            let password = FormDecoding.percentDecode(context.arguments.dropFirst().first ?? "", plusIsSpace: false)
            let authorization = context.request.header("Authorization") ?? ""
            var authorized = false
            if authorization.lowercased().hasPrefix("basic "),
                let data = Data(base64Encoded: String(authorization.dropFirst("basic ".count))),
                let credentials = String(data: data, encoding: .utf8)
            {
                authorized = credentials == "\(user):\(password)"
            }
            guard authorized else {
                if hidden { return try await context.status(404) }
                return try await context.status(401, headers: [("WWW-Authenticate", "Basic realm=\"Fake Realm\"")])
            }
            return try await context.json(["authenticated": true, "user": .string(user)])
        }

        /// `/cookies` echoes the `Cookie` header; `/cookies/set?k=v` and `/cookies/delete?k` redirect back to it.
        private static func cookies(_ context: RouteContext) async throws -> Disposition {
            switch context.arguments.first {
            case "set":
                let headers = context.request.queryItems.map { ("Set-Cookie", "\($0.name)=\($0.value); Path=/") }
                return try await context.status(302, headers: headers + [("Location", "/cookies")])
            case "delete":
                let headers = context.request.queryItems.map {
                    ("Set-Cookie", "\($0.name)=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/")
                }
                return try await context.status(302, headers: headers + [("Location", "/cookies")])
            default:
                var cookies: [String: JSONValue] = [:]
                for header in context.request.headers where header.name.caseInsensitiveEquals("Cookie") {
                    for pair in header.value.split(separator: ";") {
                        let parts = pair.split(separator: "=", maxSplits: 1)
                        guard let name = parts.first?.trimmingCharacters(in: .whitespaces), !name.isEmpty else {
                            continue
                        }
                        cookies[name] = .string(parts.count == 2 ? String(parts[1]) : "")
                    }
                }
                return try await context.json(["cookies": .object(cookies)])
            }
        }
    }
#endif
