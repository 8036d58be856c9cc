import Foundation
import HTTPTypes

/// Where an entry lives: the credential partition and the absolute URL of a GET.
struct CacheKey: Hashable, Sendable {
    /// `""` for unsigned requests, else a SHA-256 fingerprint of the `Authorization` value.
    var partition: String
    /// The absolute URL, with its query.
    var url: String

    /// The key of `request`.
    init(partition: String, url: String) {
        self.partition = partition
        self.url = url
    }

    /// The key of `request`, partitioned by its `Authorization` header.
    init?(_ request: HTTPRequest) {
        guard let url = request.url else { return nil }
        self.init(
            partition: Self.partition(ofAuthorization: request.headerFields[.authorization]), url: url.absoluteString)
    }

    /// The partition of requests signed with `authorization`: the user's entries are never served to another
    /// credential, and the secret itself is only ever kept (in memory or on disk) as a digest.
    static func partition(ofAuthorization authorization: String?) -> String {
        guard let authorization, !authorization.isEmpty else { return "" }
        return SHA256.hex("courier-cache-partition\n" + authorization)
    }

    /// The file name of the entry on disk: a digest, so neither the URL nor the partition shows in `ls`.
    var fileName: String { SHA256.hex(partition + "\n" + url) + ".cache" }
}
