public import Foundation
import HTTPTypes

/// A stored response with the times the cache needs to compute its age (RFC 9111 §4.2.3): what an ``HTTPCache``
/// gives its ``CacheStore`` to keep.
///
/// A store keeps entries as they are given and hands them back unchanged; ``serialized()`` and
/// ``init(serialized:)`` turn one into bytes and back for a store outside the process.
public struct CacheEntry: Sendable {
    /// Where the entry lives.
    public private(set) var key: CacheKey
    /// The response's status code.
    public private(set) var status: Int
    /// The stored response header fields, in order, without hop-by-hop fields.
    public private(set) var headers: [(name: String, value: String)]
    /// The response body, whole.
    public private(set) var body: Data
    /// When the request that produced (or last validated) the response was sent.
    public private(set) var requestTime: Date
    /// When its response head arrived.
    public private(set) var responseTime: Date
    /// The request header values the response's `Vary` nominates (lowercase names; `nil` when absent).
    ///
    /// For a field that carries a credential (`Authorization`, `Proxy-Authorization`, `Cookie`, and the other
    /// sensitive headers of the client's ``Redactor``), the value is not the credential but a hex HMAC-SHA256 of the
    /// field under the store's ``CacheStore/partitionKey``: a response that says `Vary: Authorization, Cookie` (as
    /// GitHub's API does) still tells one session from another, and no store keeps the token or cookie itself.
    public private(set) var vary: [String: String?]

    /// Derived from `headers` once, so a lookup parses no dates.
    private(set) var control: CacheControl
    private(set) var date: Date?
    private(set) var expires: Date?
    private(set) var lastModified: Date?
    private(set) var ageValue: TimeInterval
    private(set) var eTag: String?
    private(set) var lastModifiedText: String?

    /// Creates an entry; the cache makes these, a store only keeps them.
    ///
    /// - Parameters:
    ///   - key: Where the entry lives.
    ///   - status: The response's status code.
    ///   - headers: The stored header fields, in order.
    ///   - body: The whole body.
    ///   - requestTime: When the request was sent.
    ///   - responseTime: When the response head arrived.
    ///   - vary: The request header values the response's `Vary` nominates (digests for credentials, see ``vary``).
    public init(
        key: CacheKey,
        status: Int,
        headers: [(name: String, value: String)],
        body: Data,
        requestTime: Date,
        responseTime: Date,
        vary: [String: String?]
    ) {
        self.key = key
        self.status = status
        self.headers = headers
        self.body = body
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.vary = vary
        let fields = Self.fields(headers)
        control = CacheControl(fields)
        date = fields[.date].flatMap(HTTPDateParser.parse)
        // An invalid Expires (such as "0") means "already expired" (RFC 9111 §5.3).
        expires = fields[.expires].map { HTTPDateParser.parse($0) ?? .distantPast }
        lastModifiedText = fields[.lastModified]
        lastModified = lastModifiedText.flatMap(HTTPDateParser.parse)
        ageValue = Self.age(fields)
        eTag = fields[.eTag]
    }

    /// `Age` (RFC 9111 §5.1): the first member of the first line wins; a value that is not a non-negative integer
    /// is ignored; one past 2^31 is 2^31 (§1.2.2).
    static func age(_ fields: HTTPFields) -> TimeInterval {
        guard let line = fields[values: .age].first,
            let first = line.split(separator: ",", omittingEmptySubsequences: false).first
        else { return 0 }
        return CacheControl.deltaSeconds(first.trimmingCharacters(in: .whitespaces)).map(TimeInterval.init) ?? 0
    }

    /// The stored head as swift-http-types fields.
    var headerFields: HTTPFields { Self.fields(headers) }

    /// The stored response.
    var response: HTTPResponse {
        HTTPResponse(status: HTTPResponse.Status(code: status), headerFields: headerFields)
    }

    /// Bytes the entry takes in a store: body, header text and a fixed overhead; what a store's byte limit counts.
    public var cost: Int { body.count + headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 } + 256 }

    /// The entry's current age at `now` (RFC 9111 §4.2.3).
    func age(at now: Date) -> TimeInterval {
        let apparentAge = max(0, responseTime.timeIntervalSince(date ?? responseTime))
        let responseDelay = max(0, responseTime.timeIntervalSince(requestTime))
        let correctedInitialAge = max(apparentAge, ageValue + responseDelay)
        return correctedInitialAge + max(0, now.timeIntervalSince(responseTime))
    }

    /// How long the entry is fresh for (RFC 9111 §4.2.1, private cache: `s-maxage` does not apply).
    ///
    /// Explicit `max-age`, else `Expires − Date`; else, for a heuristically cacheable status and a URL without a
    /// query, 10 % of `Date − Last-Modified` (§4.2.2); else zero.
    var freshnessLifetime: TimeInterval {
        if let maxAge = control.maxAge { return TimeInterval(maxAge) }
        if let expires { return max(0, expires.timeIntervalSince(date ?? responseTime)) }
        if let lastModified, !key.url.contains("?"), CacheRules.heuristicallyCacheable.contains(status) {
            return max(0, (date ?? responseTime).timeIntervalSince(lastModified)) / 10
        }
        return 0
    }

    /// Whether a request with `fields` selects this entry: every header `Vary` nominates has the stored value, a
    /// credential compared by its digest under `key` (see ``varyValue(of:in:credentials:key:)``).
    func matches(_ fields: HTTPFields, credentials: Set<HTTPField.Name>, key: [UInt8]) -> Bool {
        vary.allSatisfy { name, value in
            Self.varyValue(of: name, in: fields, credentials: credentials, key: key) == value
        }
    }

    /// Whether a `304 Not Modified` answering a revalidation of this entry identifies it for update (RFC 9111
    /// §4.3.4): a strong `ETag` in the 304 must equal this entry's, strong too; a weak one must match it weakly;
    /// without an `ETag`, a `Last-Modified` must give this entry's date; a 304 with neither updates it. A 304 that
    /// does not identify the entry means the server has another representation: the entry must not take its fields.
    func isIdentified(by notModified: HTTPResponse) -> Bool {
        if let tag = notModified.headerFields[.eTag] {
            guard let eTag else { return false }
            let (newWeak, newOpaque) = Self.entityTag(tag)
            let (storedWeak, storedOpaque) = Self.entityTag(eTag)
            return newOpaque == storedOpaque && (newWeak || !storedWeak)
        }
        if let modified = notModified.headerFields[.lastModified] {
            guard let lastModified, let date = HTTPDateParser.parse(modified) else { return false }
            return date == lastModified
        }
        return true
    }

    /// An entity tag's weakness and opaque part (`W/"x"` → `(true, "\"x\"")`).
    private static func entityTag(_ tag: String) -> (weak: Bool, opaque: Substring) {
        let trimmed = tag.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("W/") { return (true, trimmed.dropFirst(2)) }
        return (false, Substring(trimmed))
    }

    /// The entry updated by a `304 Not Modified` (RFC 9111 §4.3.4): its fields replace the stored ones of the
    /// same name, except the framing fields. A 304 without `Age` drops the stored `Age`; one without `Date` is
    /// dated when it arrived.
    func merging(_ notModified: HTTPResponse, requestTime: Date, responseTime: Date) -> CacheEntry {
        let replaced = Set(
            notModified.headerFields.map { $0.name.canonicalName }.filter { !CacheRules.keptOnMerge.contains($0) })
        var merged = headers.filter { !replaced.contains($0.name.lowercased()) }
        for field in CacheRules.storedFields(of: notModified) where replaced.contains(field.name.lowercased()) {
            merged.append(field)
        }
        if notModified.headerFields[.age] == nil {
            // The stored `Age` was the first response's (a CDN's 3,500 s of a 3,600 s max-age): kept beside the new
            // response time, every revalidation would buy only what was left then.
            merged.removeAll { $0.name.lowercased() == "age" }
        }
        if notModified.headerFields[.date] == nil {
            // A 304 without `Date` is dated when it arrived (RFC 9110 §6.6.1): with the stored `Date` and the new
            // response time, the entry's apparent age would be its whole life, and it would be stale at once.
            merged.removeAll { $0.name.lowercased() == "date" }
            merged.append((name: "Date", value: HTTPDateParser.format(responseTime)))
        }
        return CacheEntry(
            key: key, status: status, headers: merged, body: body, requestTime: requestTime,
            responseTime: responseTime, vary: vary)
    }

    /// What an entry keeps of the request field `name` that `Vary` nominates: all its values in `fields`, joined by
    /// `, `, or `nil` when absent. For a field that carries a credential (``CacheRules/credentialFields``, or one of
    /// `credentials`: the client's sensitive headers), a digest of that under `key` instead, so the credential is
    /// never stored (``CacheKey/digest(ofField:value:key:)``).
    static func varyValue(
        of name: String, in fields: HTTPFields, credentials: Set<HTTPField.Name>, key: [UInt8]
    ) -> String? {
        guard let fieldName = HTTPField.Name(name) else { return nil }
        let values = fields[values: fieldName]
        guard !values.isEmpty else { return nil }
        let value = values.joined(separator: ", ")
        guard CacheRules.credentialFields.contains(fieldName) || credentials.contains(fieldName) else { return value }
        return CacheKey.digest(ofField: fieldName, value: value, key: key)
    }

    static func fields(_ headers: [(name: String, value: String)]) -> HTTPFields {
        var fields = HTTPFields()
        for header in headers {
            if let name = HTTPField.Name(header.name) { fields.append(HTTPField(name: name, value: header.value)) }
        }
        return fields
    }
}

extension CacheEntry {
    /// The entry as bytes (the disk store's format: a checksummed head and the body; `Set-Cookie` left out, since a
    /// session cookie does not belong in storage that outlives the process); `nil` when it cannot be encoded.
    public func serialized() -> Data? {
        DiskCacheStore.encode(self)
    }

    /// The entry in `data`, made by ``serialized()``; `nil` when `data` is not a complete, intact entry.
    ///
    /// - Parameter data: Bytes from ``serialized()``.
    public init?(serialized data: Data) {
        guard let entry = DiskCacheStore.decode(data) else { return nil }
        self = entry
    }
}
