import Foundation
import HTTPTypes

/// What a private cache may store and must invalidate (RFC 9111 §3, §4.4).
enum CacheRules {
    /// Statuses cacheable by default (RFC 9110 §15.1), less 206: partial content is never stored.
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]
    /// Statuses stored only with explicit freshness (OkHttp's `isCacheable`).
    static let cacheableWithExplicitFreshness: Set<Int> = [302, 307]
    /// Fields never stored (RFC 9111 §3.1: connection-specific).
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade", "proxy-authenticate",
        "proxy-authorization", "trailer",
    ]

    /// Request fields that carry a credential whatever the client's ``Redactor`` says: an entry keeps only a digest
    /// of them when `Vary` nominates them (``CacheEntry/vary``).
    static let credentialFields: Set<HTTPField.Name> = [.authorization, .proxyAuthorization, .cookie]

    /// The fields of `response` a cache stores (RFC 9111 §3.1): all but the hop-by-hop ones, those the
    /// `Connection` field names, and those a qualified `no-cache="…"` names (§5.2.2.4).
    static func storedFields(of response: HTTPResponse) -> [(name: String, value: String)] {
        let fields = response.headerFields
        var dropped = hopByHop
        for line in fields[values: .connection] {
            for token in line.split(separator: ",") {
                dropped.insert(token.trimmingCharacters(in: .whitespaces).lowercased())
            }
        }
        dropped.formUnion(CacheControl(fields).noCacheFields)
        return fields.filter { !dropped.contains($0.name.canonicalName) }.map { ($0.name.rawName, $0.value) }
    }
    /// Stored fields a 304 does not replace.
    static let keptOnMerge: Set<String> = ["content-length", "content-encoding", "transfer-encoding", "content-range"]

    /// Whether `response` to a GET with `requestControl` may be stored (RFC 9111 §3), its body not yet read.
    static func isStorable(_ response: HTTPResponse, requestControl: CacheControl) -> Bool {
        let control = CacheControl(response.headerFields)
        guard !requestControl.noStore, !control.noStore else { return false }
        guard !varyNames(response.headerFields).contains("*") else { return false }
        let code = response.status.code
        if heuristicallyCacheable.contains(code) { return true }
        if cacheableWithExplicitFreshness.contains(code) {
            return control.maxAge != nil || response.headerFields[.expires] != nil
        }
        return false
    }

    /// Whether `contentType` is `text/event-stream` (parameters and case aside).
    static func isEventStream(_ contentType: String) -> Bool {
        contentType.split(separator: ";", maxSplits: 1).first?.trimmingCharacters(in: .whitespaces)
            .lowercased() == "text/event-stream"
    }

    /// The lowercase field names `Vary` nominates.
    static func varyNames(_ fields: HTTPFields) -> [String] {
        fields[values: .vary].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
    }

    /// Whether the body read is the whole body: its length matches `Content-Length` when the transport kept it
    /// and did not decode the content.
    static func isComplete(_ body: Data, response: HTTPResponse) -> Bool {
        guard response.headerFields[.contentEncoding] == nil,
            let length = response.headerFields[.contentLength].flatMap({ Int($0) })
        else { return true }
        return length == body.count
    }

    /// Whether `method` is safe (RFC 9110 §9.2.1); the others invalidate what they touch.
    static func isSafe(_ method: HTTPRequest.Method) -> Bool {
        [.get, .head, .options, .trace].contains(method)
    }

    /// The URLs an unsafe request's success invalidates (RFC 9111 §4.4): the target, and `Location` and
    /// `Content-Location` when they share its origin.
    static func invalidatedURLs(request url: URL, response: HTTPResponse) -> [String] {
        var urls = [url.absoluteString]
        for name in [HTTPField.Name.location, .contentLocation] {
            guard let value = response.headerFields[name], let target = URL(string: value, relativeTo: url)?.absoluteURL
            else { continue }
            if target.scheme?.lowercased() == url.scheme?.lowercased(),
                target.host?.lowercased() == url.host?.lowercased(),
                target.port == url.port
            {
                urls.append(target.absoluteString)
            }
        }
        return urls
    }
}
