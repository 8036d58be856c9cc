public import HTTPTypes

/// Decides which header values and query parameters are secrets, and hides them in every output.
///
/// Courier redacts with it in log lines, decision traces, error descriptions and the cURL description of a
/// request. By default: `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie` and common token headers;
/// query keys such as `access_token`, `refresh_token`, `client_secret`, `id_token`, `password`, `api_key`.
/// Register your own:
///
/// ```swift
/// var redactor = Redactor.default
/// redactor.sensitiveHeaderNames.insert(HTTPField.Name("X-Api-Key")!)
/// redactor.sensitiveQueryKeys.insert("signature")
/// ```
public struct Redactor: Hashable, Sendable {
    /// The text that replaces a secret.
    public static let placeholder = "<redacted>"

    /// Header names whose values are secrets.
    public var sensitiveHeaderNames: Set<HTTPField.Name>
    /// Query and form keys (compared case-insensitively) whose values are secrets.
    public var sensitiveQueryKeys: Set<String> {
        didSet { sensitiveQueryKeys = Set(sensitiveQueryKeys.map { $0.lowercased() }) }
    }

    /// Creates a redactor.
    public init(sensitiveHeaderNames: Set<HTTPField.Name>, sensitiveQueryKeys: Set<String>) {
        self.sensitiveHeaderNames = sensitiveHeaderNames
        self.sensitiveQueryKeys = Set(sensitiveQueryKeys.map { $0.lowercased() })
    }

    /// The default redactor.
    public static let `default` = Redactor(
        sensitiveHeaderNames: [
            .authorization, .proxyAuthorization, .cookie, .setCookie,
            HTTPField.Name("X-Api-Key"), HTTPField.Name("X-Auth-Token"), HTTPField.Name("X-Amz-Security-Token"),
        ].compactMap { $0 }.reduce(into: Set()) { $0.insert($1) },
        sensitiveQueryKeys: [
            "access_token", "refresh_token", "client_secret", "id_token", "password", "passwd", "token",
            "api_key", "apikey", "secret", "code_verifier", "assertion",
        ]
    )

    /// Whether the value of header `name` is a secret.
    public func isSensitive(_ name: HTTPField.Name) -> Bool {
        sensitiveHeaderNames.contains(name)
    }

    /// Whether the value of query or form key `key` is a secret.
    public func isSensitive(queryKey key: some StringProtocol) -> Bool {
        sensitiveQueryKeys.contains(key.lowercased())
    }

    /// `fields` with the values of sensitive headers replaced.
    public func redact(_ fields: HTTPFields) -> HTTPFields {
        guard fields.contains(where: { isSensitive($0.name) }) else { return fields }
        var result = HTTPFields()
        for field in fields {
            result.append(isSensitive(field.name) ? HTTPField(name: field.name, value: Self.placeholder) : field)
        }
        return result
    }

    /// `request` with sensitive header values and query values replaced.
    public func redact(_ request: HTTPRequest) -> HTTPRequest {
        var request = request
        request.headerFields = redact(request.headerFields)
        if let path = request.path { request.path = redactQuery(inPath: path) }
        if let authority = request.authority, let at = authority.lastIndex(of: "@") {
            request.authority = Self.placeholder + String(authority[at...])
        }
        return request
    }

    /// `path` (with its query) with sensitive query values replaced.
    public func redactQuery(inPath path: String) -> String {
        guard let mark = path.firstIndex(of: "?") else { return path }
        let query = path[path.index(after: mark)...]
        return String(path[...mark]) + redactPairs(query)
    }

    /// A form-encoded string (`a=1&password=x`) with sensitive values replaced.
    public func redactPairs(_ encoded: some StringProtocol) -> String {
        encoded.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = String(parts.first ?? "").removingPercentEncodingForDisplay
            let keyParts = key.split(whereSeparator: { $0 == "[" || $0 == "]" || $0 == "." })
            guard parts.count == 2,
                isSensitive(queryKey: key) || keyParts.contains(where: { isSensitive(queryKey: $0) })
            else {
                return String(pair)
            }
            return "\(parts[0])=\(Self.placeholder)"
        }.joined(separator: "&")
    }

    /// The absolute URL of `request` for display: scheme, authority and path (its query already as stored).
    static func displayURL(of request: HTTPRequest) -> String {
        "\(request.scheme ?? "http")://\(request.authority ?? "")\(request.path ?? "")"
    }
}

extension String {
    /// Percent-decoding for comparing keys; invalid escapes are kept as written.
    var removingPercentEncodingForDisplay: String {
        guard contains("%") else { return self }
        var bytes: [UInt8] = []
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            else {
                bytes.append(byte)
                continue
            }
            bytes.append(value)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
