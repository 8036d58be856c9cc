public import Foundation
public import HTTPTypes

/// Decides which header values and query parameters are secrets, and hides them in every output.
///
/// Courier redacts with it in log lines, decision traces, events, error descriptions and the cURL description of a
/// request, and scrubs the secret values it finds (see ``Secrets``) out of text it did not write itself, such as an
/// underlying error's description. By default it treats as secrets the values of the headers in
/// ``defaultSensitiveHeaderNames`` and of the query, form and JSON keys in ``defaultSensitiveQueryKeys``, compared
/// case-insensitively; `code` counts as a secret only next to an OAuth 2.0 key (see
/// ``oauthContextKeys``). Register your own:
///
/// ```swift
/// var redactor = Redactor.default
/// redactor.sensitiveHeaderNames.insert(HTTPField.Name("X-Session-Key")!)
/// redactor.sensitiveQueryKeys.insert("tenant_secret")
/// ```
///
/// A key or header name is also sensitive when one of its words, or two of them run together, is in
/// ``sensitiveKeyWords`` (`user[password_confirmation]`, `newPassword`, `api_token`, `AWSAccessKeyId`, `X-Vault-Token`,
/// `X-Auth-Key`), as Rails' parameter filter and OpenTelemetry's URL redaction match parts of names; `max_tokens` or
/// `Sec-WebSocket-Key` are not. Remove a word to stop it.
///
/// In a header whose value is a URL (`Location`, `Content-Location`, `Referer`, `Link`), sensitive query values
/// and userinfo are redacted too. So are path parameters under a sensitive name, in every URL: the session in
/// `/cart;jsessionid=1A2B3C`, which a Java servlet container writes into the links it serves a client without cookies.
public struct Redactor: Hashable, Sendable {
    /// The text that replaces a secret.
    public static let placeholder = "<redacted>"

    /// Header names whose values are secrets.
    public var sensitiveHeaderNames: Set<HTTPField.Name>
    /// Query, form and JSON keys (compared case-insensitively) whose values are secrets. Each is also kept without
    /// its `_` and `-`, so that `access_token` covers `accessToken` and `AccessToken` (JSON APIs such as AWS
    /// Cognito's spell their keys so).
    public var sensitiveQueryKeys: Set<String> {
        didSet { sensitiveQueryKeys = Self.normalized(sensitiveQueryKeys) }
    }
    /// Words (lowercase) that make any query, form or JSON key and any header name sensitive, alone or as two words
    /// of the name run together (`api` + `key`): see ``defaultSensitiveKeyWords``. A name's words are split at any
    /// character that is not a letter or digit, between a letter and a digit (`password1`), and at a change of case
    /// (`newPassword`, `AWSAccessKeyId`). A word followed by a describing word (`token_type`, `password_policy`,
    /// `token_endpoint`) does not count, nor `token` after a pagination word (`pageToken`, `NextToken`), nor a
    /// header whose name starts `Access-Control-`.
    public var sensitiveKeyWords: Set<String> {
        didSet { sensitiveKeyWords = Set(sensitiveKeyWords.map { $0.lowercased() }) }
    }

    /// Creates a redactor. `sensitiveKeyWords` defaults to ``defaultSensitiveKeyWords``; pass `[]` to match names
    /// exactly.
    public init(
        sensitiveHeaderNames: Set<HTTPField.Name>,
        sensitiveQueryKeys: Set<String>,
        sensitiveKeyWords: Set<String> = Redactor.defaultSensitiveKeyWords
    ) {
        self.sensitiveHeaderNames = sensitiveHeaderNames
        self.sensitiveQueryKeys = Self.normalized(sensitiveQueryKeys)
        self.sensitiveKeyWords = Set(sensitiveKeyWords.map { $0.lowercased() })
    }

    /// The words that make a name sensitive by default, wherever they stand in it:
    ///
    /// - `password`, `passwd`, `passphrase`, `secret`, `token`, `credential`, `credentials`, `signature`, `jwt`;
    /// - two words run together: `apikey`, `accesskey`, `authkey`, `privatekey`, `secretkey`, `signingkey`,
    ///   `subscriptionkey`, `sessionid`;
    /// - session cookies as query parameters: `jsessionid`, `phpsessid`.
    ///
    /// Not `tokens` (`max_tokens`, `input_tokens` of a language model API), nor `key` alone (`sort_key`,
    /// `Idempotency-Key`, `Sec-WebSocket-Key`); `key` alone is a sensitive query key (Google APIs), not a word.
    public static let defaultSensitiveKeyWords: Set<String> = [
        "password", "passwd", "passphrase", "secret", "token", "credential", "credentials", "signature", "jwt",
        "apikey", "accesskey", "authkey", "privatekey", "secretkey", "signingkey", "subscriptionkey", "sessionid",
        "jsessionid", "phpsessid",
    ]

    /// `keys` lowercased, each also without its separators.
    private static func normalized(_ keys: Set<String>) -> Set<String> {
        Set(keys.flatMap { key in [key.lowercased(), withoutSeparators(key.lowercased())] })
    }

    /// `key` without `_` and `-`.
    private static func withoutSeparators(_ key: String) -> String {
        key.contains(where: { $0 == "_" || $0 == "-" }) ? key.filter { $0 != "_" && $0 != "-" } : key
    }

    /// The sensitive headers that never cross an origin change, whatever the redactor.
    private static let credentialHeaderNames: Set<HTTPField.Name> = Set(
        [
            .authorization, .proxyAuthorization, .cookie, HTTPField.Name("Cookie2"), .wwwAuthenticate,
            .proxyAuthenticate,
        ].compactMap { $0 })

    /// Whether a redirect to another origin strips header `name` (`RequestResolver.stripCredentials`), and a
    /// transport must not add it to every request on its own (URLSession's `httpAdditionalHeaders`): the credential
    /// headers and this redactor's sensitive ones.
    package func isOriginBound(_ name: HTTPField.Name) -> Bool {
        Self.credentialHeaderNames.contains(name) || isSensitive(name)
    }

    /// The default redactor: ``defaultSensitiveHeaderNames``, ``defaultSensitiveQueryKeys`` and
    /// ``defaultSensitiveKeyWords``.
    public static let `default` = Redactor(
        sensitiveHeaderNames: defaultSensitiveHeaderNames,
        sensitiveQueryKeys: defaultSensitiveQueryKeys
    )

    /// The headers whose values the default redactor hides.
    ///
    /// - Credentials: `Authorization`, `Proxy-Authorization` (RFC 9110 §11.6.2, §11.7.2).
    /// - Cookies: `Cookie`, `Set-Cookie` (RFC 6265).
    /// - API keys and tokens in the wild: `X-Api-Key` and `Api-Key` (AWS API Gateway, Azure OpenAI),
    ///   `X-Goog-Api-Key` (Google Cloud), `Ocp-Apim-Subscription-Key` (Azure API Management), `Private-Token`
    ///   (GitLab), `X-Auth-Token`, `X-Access-Token`, `X-Amz-Security-Token` (AWS temporary credentials),
    ///   `X-CSRF-Token` and `X-XSRF-Token`.
    public static let defaultSensitiveHeaderNames: Set<HTTPField.Name> = Set(
        [HTTPField.Name.authorization, .proxyAuthorization, .cookie, .setCookie]
            + [
                "X-Api-Key", "Api-Key", "X-Goog-Api-Key", "Ocp-Apim-Subscription-Key", "Private-Token", "X-Auth-Token",
                "X-Access-Token", "X-Amz-Security-Token", "X-CSRF-Token", "X-XSRF-Token",
            ].compactMap { HTTPField.Name($0) }
    )

    /// The query, form and JSON keys whose values the default redactor hides (all lowercase; compared
    /// case-insensitively, and also as a part of a bracketed or dotted key such as `user[password]`).
    ///
    /// - OAuth 2.0 and OpenID Connect (RFC 6749, RFC 7636, RFC 7523, RFC 8693): `access_token`, `refresh_token`,
    ///   `id_token`, `client_secret`, `code_verifier`, `assertion`, `client_assertion`, `subject_token`,
    ///   `actor_token`, `device_code` (RFC 8628). The authorization `code` is a secret only next to an
    ///   ``oauthContextKeys`` key.
    /// - API keys: `api_key`, `api-key`, `apikey`, `x-api-key`, `key` (Google APIs), `subscription-key` (Azure),
    ///   `access_key`, `private_token` (GitLab), `auth_token`, `token`, `jwt`.
    /// - Signed URLs: `sig` (Azure SAS), `signature` (AWS Signature V2), `x-amz-signature`, `x-amz-credential`,
    ///   `x-amz-security-token` (AWS Signature V4), `x-goog-signature`, `x-goog-credential` (Google Cloud Storage).
    /// - Sessions and passwords: `session`, `sessionid`, `session_id`, `password`, `passwd`, `pwd`, `passphrase`,
    ///   `secret`, `client_secret`.
    public static let defaultSensitiveQueryKeys: Set<String> = [
        "access_token", "refresh_token", "id_token", "client_secret", "code_verifier", "assertion",
        "client_assertion", "subject_token", "actor_token", "device_code",
        "api_key", "api-key", "apikey", "x-api-key", "key", "subscription-key", "access_key", "private_token",
        "auth_token", "token", "jwt",
        "sig", "signature", "x-amz-signature", "x-amz-credential", "x-amz-security-token", "x-goog-signature",
        "x-goog-credential",
        "session", "sessionid", "session_id", "password", "passwd", "pwd", "passphrase", "secret",
    ]

    /// Keys that mark a query, form or JSON object as part of an OAuth 2.0 exchange, where `code` is an
    /// authorization code and so a secret: the redirect back to the app (`?code=…&state=…`) and the token request
    /// (`grant_type=authorization_code&code=…&redirect_uri=…`).
    public static let oauthContextKeys: Set<String> = [
        "state", "grant_type", "redirect_uri", "client_id", "code_verifier", "code_challenge",
    ]

    /// Whether the value of header `name` is a secret: a name in ``sensitiveHeaderNames``, or one with a word in
    /// ``sensitiveKeyWords``.
    public func isSensitive(_ name: HTTPField.Name) -> Bool {
        // Not the CORS headers: `Access-Control-Allow-Credentials: true` names credentials, it holds none.
        sensitiveHeaderNames.contains(name)
            || (!name.canonicalName.hasPrefix("access-control-") && hasSensitiveWord(name.canonicalName))
    }

    /// Whether the value of query or form key `key` is a secret (whatever the other keys; see
    /// ``oauthContextKeys`` for `code`): a key in ``sensitiveQueryKeys``, or one with a word in
    /// ``sensitiveKeyWords``.
    public func isSensitive(queryKey key: some StringProtocol) -> Bool {
        // The set holds every key without its separators too, so that form alone decides.
        sensitiveQueryKeys.contains(Self.withoutSeparators(key.lowercased())) || hasSensitiveWord(key)
    }

    /// Whether a word of `name`, or two adjacent words run together, is in ``sensitiveKeyWords``, and the name holds
    /// the secret rather than names something about it: not when the word is followed by one of
    /// ``describingWords`` (`token_type`, `token_type_hint`, `password_policy`, `token_endpoint`), nor for a
    /// pagination token (`pageToken`, `NextToken`, `continuation-token`).
    func hasSensitiveWord(_ name: some StringProtocol) -> Bool {
        guard !sensitiveKeyWords.isEmpty else { return false }
        let words = Self.words(of: name)
        for (index, word) in words.enumerated() {
            let matches =
                sensitiveKeyWords.contains(word) || (index > 0 && sensitiveKeyWords.contains(words[index - 1] + word))
            guard matches else { continue }
            if index + 1 < words.count, Self.describingWords.contains(words[index + 1]) { continue }
            if word == "token", index > 0, Self.paginationWords.contains(words[index - 1]) { continue }
            return true
        }
        return false
    }

    /// Words after a sensitive one that make the name about the secret, not the secret.
    static let describingWords: Set<String> = [
        "type", "hint", "method", "endpoint", "url", "uri", "expires", "expiry", "expiration", "exp", "count",
        "limit", "length", "name", "lifetime", "ttl", "format", "version", "policy", "required", "mode", "strength",
    ]

    /// Words before `token` that make it a position in a list (Google's `pageToken`, AWS's `NextToken`).
    static let paginationWords: Set<String> = [
        "page", "next", "continuation", "pagination", "cursor", "sync", "resume",
    ]

    /// The words of `name`, lowercased: split at anything but a letter or digit, between a letter and a digit, before
    /// a capital after a small letter (`newPassword`), and before the last capital of a run a small letter follows
    /// (`AWSAccessKeyId`).
    static func words(of name: some StringProtocol) -> [String] {
        var words: [String] = []
        var word = ""
        let characters = Array(name)
        for (index, character) in characters.enumerated() {
            guard character.isLetter || character.isNumber else {
                if !word.isEmpty { words.append(word) }
                word = ""
                continue
            }
            if index > 0, !word.isEmpty {
                let before = characters[index - 1]
                let startsWord =
                    before.isLetter != character.isLetter
                    || (character.isUppercase
                        && (before.isLowercase
                            || (before.isUppercase && index + 1 < characters.count && characters[index + 1].isLowercase)))
                if startsWord {
                    words.append(word)
                    word = ""
                }
            }
            word += character.lowercased()
        }
        if !word.isEmpty { words.append(word) }
        return words
    }

    /// Whether the value under `key` is a secret in a query, form or JSON object that also has `siblings`.
    func isSensitive(key: String, siblings: some Sequence<String>) -> Bool {
        if isSensitive(queryKey: key) { return true }
        let parts = key.split(whereSeparator: { $0 == "[" || $0 == "]" || $0 == "." })
        if parts.contains(where: { isSensitive(queryKey: $0) }) { return true }
        let last = parts.last.map { $0.lowercased() } ?? key.lowercased()
        return last == "code" && siblings.contains { Self.oauthContextKeys.contains($0.lowercased()) }
    }

    /// `fields` with the values of sensitive headers replaced, and the query secrets and userinfo in URL-valued
    /// headers (`Location`, `Content-Location`, `Referer`, `Link`) replaced.
    public func redact(_ fields: HTTPFields) -> HTTPFields {
        guard fields.contains(where: { isSensitive($0.name) || Self.urlValuedNames.contains($0.name) }) else {
            return fields
        }
        var result = HTTPFields()
        for field in fields {
            if isSensitive(field.name) {
                result.append(HTTPField(name: field.name, value: Self.placeholder))
            } else if Self.urlValuedNames.contains(field.name) {
                let value = field.name.canonicalName == "link" ? redactLinks(field.value) : redactURL(field.value)
                result.append(HTTPField(name: field.name, value: value))
            } else {
                result.append(field)
            }
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

    /// `path` (with its query) with sensitive query values replaced, and the values of path parameters under the
    /// same names (`/cart;jsessionid=…`); in a URL reference with a fragment, the fragment's `key=value` pairs too
    /// (an OAuth implicit or fragment-mode answer: `#access_token=…&state=…`).
    public func redactQuery(inPath path: String) -> String {
        guard let hash = path.firstIndex(of: "#") else { return redactQuery(beforeFragment: Substring(path)) }
        let fragment = path[path.index(after: hash)...]
        return redactQuery(beforeFragment: path[..<hash]) + "#"
            + (fragment.contains("=") ? redactPairs(fragment) : String(fragment))
    }

    private func redactQuery(beforeFragment path: Substring) -> String {
        guard let mark = path.firstIndex(of: "?") else { return redactPathParameters(path) }
        let query = path[path.index(after: mark)...]
        return redactPathParameters(path[..<mark]) + "?" + redactPairs(query)
    }

    /// `path` (without its query) with the values of sensitive path parameters replaced: `/cart;jsessionid=…`, the
    /// session a Java servlet container writes into every URL of a client without cookies, or `;token=…`.
    private func redactPathParameters(_ path: Substring) -> String {
        let values = sensitivePathParameterValues(in: path)
        guard !values.isEmpty else { return String(path) }
        var result = ""
        var last = path.startIndex
        for value in values {
            result += path[last..<value.lowerBound]
            result += Self.placeholder
            last = value.upperBound
        }
        result += path[last...]
        return result
    }

    /// Where the values of `path`'s parameters under sensitive names are: `;name=value` within a segment (RFC 3986
    /// section 3.3), up to the next `;` or `/`; `path` holds no query.
    func sensitivePathParameterValues(in path: Substring) -> [Range<Substring.Index>] {
        guard path.contains(";") else { return [] }
        var values: [Range<Substring.Index>] = []
        var index = path.startIndex
        while let semicolon = path[index...].firstIndex(of: ";") {
            let start = path.index(after: semicolon)
            let end = path[start...].firstIndex { $0 == ";" || $0 == "/" } ?? path.endIndex
            let parameter = path[start..<end]
            if let equals = parameter.firstIndex(of: "="),
                isSensitive(queryKey: String(parameter[..<equals]).removingPercentEncodingForDisplay)
            {
                values.append(parameter.index(after: equals)..<end)
            }
            index = end
        }
        return values
    }

    /// A form-encoded string (`a=1&password=x`) with sensitive values replaced.
    public func redactPairs(_ encoded: some StringProtocol) -> String {
        let pairs = Self.pairs(encoded)
        let keys = pairs.map(\.key)
        return pairs.map { pair -> String in
            guard pair.value != nil, isSensitive(key: pair.key, siblings: keys) else {
                return String(pair.raw)
            }
            return "\(pair.rawKey)=\(Self.placeholder)"
        }.joined(separator: "&")
    }

    /// `url` for display: scheme, host, port, path and query, with sensitive query values replaced and no
    /// userinfo or fragment.
    ///
    /// ```swift
    /// Redactor.default.displayURL(URL(string: "https://ada:pw@api.example.com/f?sig=abc&x=1#top")!)
    /// // "https://api.example.com/f?sig=<redacted>&x=1"
    /// ```
    public func displayURL(_ url: URL) -> String {
        var text = url.absoluteString
        if let hash = text.firstIndex(of: "#") { text = String(text[..<hash]) }
        return redactURL(text, userinfo: "")
    }

    /// The absolute URL of `request` for display: scheme, authority and path (its query already as stored).
    static func displayURL(of request: HTTPRequest) -> String {
        "\(request.scheme ?? "http")://\(request.authority ?? "")\(request.path ?? "")"
    }

    /// Headers whose values are URLs (or URL lists), whose query secrets and userinfo are redacted.
    static let urlValuedNames: Set<HTTPField.Name> = Set(
        [HTTPField.Name.location, .contentLocation, .referer] + [HTTPField.Name("Link")].compactMap { $0 }
    )

    /// An absolute or relative URL reference with sensitive query values and its userinfo replaced by
    /// `userinfo` (the placeholder unless given).
    func redactURL(_ text: String, userinfo: String = Redactor.placeholder) -> String {
        var text = text
        if let range = Self.userinfoRange(in: text) {
            text.replaceSubrange(range, with: userinfo.isEmpty ? "" : userinfo + "@")
        }
        return redactQuery(inPath: text)
    }

    /// A `Link` header value with every `<URL>` redacted.
    private func redactLinks(_ value: String) -> String {
        var result = ""
        var rest = Substring(value)
        while let open = rest.firstIndex(of: "<"), let close = rest[open...].firstIndex(of: ">") {
            result += rest[...open]
            result += redactURL(String(rest[rest.index(after: open)..<close]))
            rest = rest[close...]
        }
        return result + rest
    }

    /// The range of `userinfo@` in an absolute URL (`scheme://userinfo@host/…`) or a scheme-relative one
    /// (`//userinfo@host/…`), if it has one.
    static func userinfoRange(in text: String) -> Range<String.Index>? {
        let authorityStart =
            text.hasPrefix("//") ? text.startIndex..<text.index(text.startIndex, offsetBy: 2) : text.range(of: "://")
        guard let schemeEnd = authorityStart else { return nil }
        let authorityEnd = text[schemeEnd.upperBound...].firstIndex(where: { "/?#".contains($0) }) ?? text.endIndex
        guard let at = text[schemeEnd.upperBound..<authorityEnd].lastIndex(of: "@") else { return nil }
        return schemeEnd.upperBound..<text.index(after: at)
    }

    /// One `key=value` pair of a form-encoded string, as written and with its key percent-decoded.
    struct Pair {
        /// The pair as written.
        var raw: Substring
        /// The key as written.
        var rawKey: Substring
        /// The key, percent-decoded (`+` as a space).
        var key: String
        /// The value as written, or `nil` when the pair has no `=`.
        var value: Substring?
    }

    /// The pairs of a form-encoded string (`a=1&b=2`), empty ones kept.
    static func pairs(_ encoded: some StringProtocol) -> [Pair] {
        encoded.split(separator: "&", omittingEmptySubsequences: false).map { pair in
            let raw = Substring(pair)
            let equals = raw.firstIndex(of: "=")
            let rawKey = raw[..<(equals ?? raw.endIndex)]
            let value = equals.map { raw[raw.index(after: $0)...] }
            return Pair(raw: raw, rawKey: rawKey, key: String(rawKey).removingFormEncodingForDisplay, value: value)
        }
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
            guard let high = iterator.next() else {
                bytes.append(byte)
                break
            }
            guard let low = iterator.next() else {
                bytes += [byte, high]
                break
            }
            guard let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else {
                bytes += [byte, high, low]
                continue
            }
            bytes.append(value)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Form decoding for display: `+` as a space, then percent-decoding.
    var removingFormEncodingForDisplay: String {
        replacingOccurrences(of: "+", with: " ").removingPercentEncodingForDisplay
    }
}
