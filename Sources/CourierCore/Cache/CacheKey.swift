import Foundation
import HTTPTypes

/// Where a ``CacheEntry`` lives: the credential partition and the absolute URL of a GET.
///
/// A ``CacheStore`` keeps at most one entry per key. The partition keeps one credential's responses from another's:
/// it never contains the credential itself, only an HMAC of it under the store's ``CacheStore/partitionKey``.
public struct CacheKey: Hashable, Sendable {
    /// `""` for unsigned requests, else a hex HMAC-SHA256 under the store's ``CacheStore/partitionKey`` of the
    /// `Authorization` value or, when the request carries other credential fields, of all of them.
    public var partition: String
    /// The absolute URL, with its query.
    public var url: String

    /// Creates a key.
    ///
    /// - Parameters:
    ///   - partition: The credential partition (`""` for unsigned requests).
    ///   - url: The absolute URL, with its query.
    public init(partition: String, url: String) {
        self.partition = partition
        self.url = url
    }

    /// The key of `request`, partitioned by its credentials under `partitionKey`: its `Authorization` header when
    /// that is the only credential it carries, else the values of all the `credentialHeaders` it carries
    /// (`Authorization`, `Cookie`, `X-Api-Key`, …).
    ///
    /// An app that sends one fixed `Authorization` (a gateway's or a staging server's `Basic` credential) and says
    /// who the user is in another header (`X-Auth-Token`, a session cookie) gets one partition per user, not one for
    /// all of them: with a server that sends no `Vary`, the next user would otherwise be served the previous one's
    /// `private` responses.
    init?(_ request: HTTPRequest, partitionKey: [UInt8], credentialHeaders: Set<HTTPField.Name> = []) {
        guard let url = request.url else { return nil }
        let fields = request.headerFields
        let partition =
            credentialHeaders.isEmpty || !Self.hasCredential(besidesAuthorization: fields, credentialHeaders)
            ? Self.partition(ofAuthorization: fields[.authorization], key: partitionKey)
            : Self.partition(
                of: fields, credentialHeaders: credentialHeaders.union([.authorization]), key: partitionKey)
        self.init(partition: partition, url: url.absoluteString)
    }

    /// Whether `fields` hold a credential field other than `Authorization` (a `Set-Cookie` is not one).
    private static func hasCredential(besidesAuthorization fields: HTTPFields, _ names: Set<HTTPField.Name>) -> Bool {
        fields.contains { $0.name != .authorization && $0.name != .setCookie && names.contains($0.name) }
    }

    /// The partition of requests signed with `authorization`: the user's entries are never served to another
    /// credential, and the secret is only ever kept as an HMAC under the cache's own random key, so a low-entropy
    /// credential (`Basic` with a guessable password) cannot be recovered from a cache file by guessing.
    static func partition(ofAuthorization authorization: String?, key: [UInt8]) -> String {
        guard let authorization, !authorization.isEmpty else { return "" }
        return SHA256.hexString(SHA256.hmac(key: key, message: Array(authorization.utf8)))
    }

    /// The partition of a request that carries credentials other than `Authorization` (and maybe that too): an HMAC
    /// of each such field's name and value, so a response to one API key or cookie is never served to another (or
    /// to a request with none). `""` when it carries none. Each line ends in a newline, which no `Authorization` value contains:
    /// no such partition equals an `Authorization` one. A signed partition: a sign-in or sign-out purges it too.
    static func partition(of fields: HTTPFields, credentialHeaders: Set<HTTPField.Name>, key: [UInt8]) -> String {
        var lines: [String] = []
        for field in fields where field.name != .setCookie && credentialHeaders.contains(field.name) {
            lines.append("\(field.name.canonicalName): \(field.value)\n")
        }
        guard !lines.isEmpty else { return "" }
        return SHA256.hexString(SHA256.hmac(key: key, message: Array(lines.sorted().joined().utf8)))
    }

    /// What an entry's ``CacheEntry/vary`` keeps of a credential field (`Vary: Authorization`, `Vary: Cookie`): an
    /// HMAC of its name and `value` under the partition `key`, never the value, so that a request with the same
    /// credential still selects the entry and nothing in a store gives the credential away. Its message starts with
    /// `vary`, so it never equals a partition.
    static func digest(ofField name: HTTPField.Name, value: String, key: [UInt8]) -> String {
        SHA256.hexString(SHA256.hmac(key: key, message: Array("vary\n\(name.canonicalName): \(value)\n".utf8)))
    }

    /// A new random partition key.
    static func randomPartitionKey() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// The file name of the entry on disk: a digest, so neither the URL nor the partition shows in `ls`.
    var fileName: String { SHA256.hex(partition + "\n" + url) + ".cache" }
}
