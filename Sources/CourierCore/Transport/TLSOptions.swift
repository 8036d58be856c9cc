public import Foundation

/// How a client secures its HTTPS connections: which roots it trusts, which keys it pins, which certificate it
/// presents, the lowest TLS version it accepts, and which HTTP versions it offers.
///
/// One value means the same on every transport. Set it for a whole client (``Client/Configuration/tls``) and
/// override it for one server or environment (``Server/tls``). A transport that cannot honour a setting fails the
/// call with ``CourierError/Code/unsupported`` naming the setting; it never ignores it.
///
/// ```swift
/// var tls = TLSOptions()
/// tls.pins = [try TLSOptions.PinSet(host: "api.example.com", pins: [primaryPin, backupPin])]
/// let client = Client(server: production, transport: AsyncHTTPClientTransport()) { $0.tls = tls }
/// ```
///
/// A TLS failure is never retried and is reported within one handshake, with a code that names its cause:
/// ``CourierError/Code/untrustedCertificate``, ``CourierError/Code/hostnameMismatch``,
/// ``CourierError/Code/certificateExpired``, ``CourierError/Code/pinMismatch``,
/// ``CourierError/Code/tlsHandshakeFailed`` or ``CourierError/Code/clientCertificateRejected``.
public struct TLSOptions: Hashable, Sendable {
    /// Which certificate authorities are trusted.
    public var trust: Trust
    /// Public-key pins, per host pattern (OWASP MASVS-NETWORK-2). A host matched by a pin set must present a
    /// chain that contains one of its keys, or the connection fails with ``CourierError/Code/pinMismatch`` before
    /// a byte of the request is sent. Hosts no pin set matches are not pinned.
    public var pins: [PinSet]
    /// The certificate the client presents when the server asks for one (mutual TLS).
    public var clientIdentity: ClientIdentity?
    /// The lowest TLS version accepted. Default: TLS 1.2 (RFC 8996 deprecates 1.0 and 1.1). Below TLS 1.2 only
    /// HTTP/1.1 is offered, since HTTP/2 requires TLS 1.2 or later (RFC 9113 §9.2). A transport built on a TLS
    /// configuration of your own that requires TLS 1.3 keeps requiring it unless this asks for less than TLS 1.2.
    public var minimumVersion: Version
    /// Which HTTP versions are offered through ALPN. Default: ``HTTPVersions/automatic`` (HTTP/2 when the server
    /// agrees, else HTTP/1.1).
    public var httpVersions: HTTPVersions
    /// Whether certificates are not verified for loopback hosts (`localhost`, `127.0.0.0/8`, `::1`): a local
    /// development server with a self-signed certificate. Never applies to any other host, to a `*.localhost` name
    /// (which a resolver without RFC 6761 support looks up in DNS), or to a request that goes through a proxy (whose
    /// `localhost` is another machine's). Pins still apply. Default: `false`.
    public var allowsInsecureLoopback: Bool

    /// Creates options; by default: system roots, no pins, no client certificate, TLS 1.2 or later, HTTP/2 when
    /// offered.
    public init(
        trust: Trust = .system,
        pins: [PinSet] = [],
        clientIdentity: ClientIdentity? = nil,
        minimumVersion: Version = .tls12,
        httpVersions: HTTPVersions = .automatic,
        allowsInsecureLoopback: Bool = false
    ) {
        self.trust = trust
        self.pins = pins
        self.clientIdentity = clientIdentity
        self.minimumVersion = minimumVersion
        self.httpVersions = httpVersions
        self.allowsInsecureLoopback = allowsInsecureLoopback
    }

    /// The defaults: what a browser does.
    public static let `default` = TLSOptions()

    /// Whether these are the defaults (a transport may then take its fastest path).
    public var isDefault: Bool { self == .default }

    /// The pin set that applies to `host`, if any (the first that matches).
    public func pinSet(for host: String) -> PinSet? {
        let host = TLSOptions.canonicalHost(host)
        return pins.first { $0.matches(canonicalHost: host) }
    }

    /// A host lowercased, without a trailing dot or IPv6 brackets: the form every TLS decision compares.
    public static func canonicalHost(_ host: String) -> String {
        HostName.canonical(host)
    }

    /// Whether `host` is a loopback host for ``allowsInsecureLoopback``: `localhost`, `127.0.0.0/8` or `::1`.
    ///
    /// Not `*.localhost`: RFC 6761 reserves those names for loopback, but glibc without `nss-myhostname` (a typical
    /// container) looks them up in DNS, and a spoofed answer must not get a connection whose certificate nobody
    /// checked.
    public static func isLoopback(_ host: String) -> Bool {
        let host = canonicalHost(host)
        return !host.hasSuffix(".localhost") && CleartextPolicy.isLoopback(host[...])
    }
}

extension TLSOptions {
    /// A TLS protocol version.
    public enum Version: Int, Hashable, Sendable, Comparable, CustomStringConvertible {
        /// TLS 1.0 (deprecated by RFC 8996: accept it only for a legacy server you cannot change).
        case tls10 = 10
        /// TLS 1.1 (deprecated by RFC 8996).
        case tls11 = 11
        /// TLS 1.2.
        case tls12 = 12
        /// TLS 1.3.
        case tls13 = 13

        /// `TLS 1.2`.
        public var description: String { "TLS 1.\(rawValue - 10)" }

        /// Orders versions from oldest to newest.
        public static func < (lhs: Version, rhs: Version) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Which HTTP versions a client offers through ALPN.
    public enum HTTPVersions: Hashable, Sendable {
        /// HTTP/2 when the server agrees, else HTTP/1.1.
        case automatic
        /// HTTP/1.1 only.
        case http1Only
    }

    /// Which certificate authorities a client trusts.
    public enum Trust: Hashable, Sendable {
        /// The system's roots (the default).
        case system
        /// The system's roots and these (a company's private CA).
        case systemAnd([Certificate])
        /// Only these roots: the system's are not trusted.
        case only([Certificate])

        /// The extra or only roots.
        public var certificates: [Certificate] {
            switch self {
            case .system: []
            case .systemAnd(let certificates), .only(let certificates): certificates
            }
        }

        /// Whether the system's roots are trusted.
        public var includesSystemRoots: Bool {
            if case .only = self { return false }
            return true
        }
    }

    /// An X.509 certificate, held as its DER bytes.
    public struct Certificate: Hashable, Sendable {
        /// The certificate's DER encoding.
        public let der: [UInt8]

        /// A certificate from its DER bytes.
        public init(der: [UInt8]) { self.der = der }

        /// Every certificate in a PEM text (`-----BEGIN CERTIFICATE-----` blocks), in order.
        ///
        /// - Throws: ``CourierError/Code/invalidBody``-free: a ``TLSOptions/Error`` naming what is wrong when the
        ///   text holds no certificate or a block is not valid base64.
        public static func pem(_ text: String) throws -> [Certificate] {
            let blocks = try PEM.blocks(in: text, label: "CERTIFICATE")
            guard !blocks.isEmpty else { throw Error("the PEM text holds no CERTIFICATE block") }
            return blocks.map(Certificate.init(der:))
        }

        /// Every certificate in a PEM file, or the one certificate in a DER file.
        public static func file(at url: URL) throws -> [Certificate] {
            let data: Data
            do {
                data = try Data(contentsOf: url)
            } catch {
                throw Error("cannot read the certificate file \(url.lastPathComponent): \(error.localizedDescription)")
            }
            if let text = String(data: data, encoding: .utf8), text.contains("-----BEGIN") {
                return try pem(text)
            }
            return [Certificate(der: [UInt8](data))]
        }
    }

    /// The certificate chain and private key a client presents for mutual TLS.
    public enum ClientIdentity: Hashable, Sendable {
        /// PEM texts: the certificate chain (leaf first) and its private key (PKCS#8, SEC1 or PKCS#1).
        case pem(certificateChain: String, privateKey: String)
        /// PEM files: the certificate chain (leaf first) and its private key.
        case pemFiles(certificateChain: URL, privateKey: URL)
    }

    /// The public keys one host (or host pattern) must present: SHA-256 hashes of the DER SubjectPublicKeyInfo,
    /// base64-encoded (what `openssl x509 -pubkey | openssl pkey -pubin -outform der | openssl dgst -sha256
    /// -binary | base64` prints).
    ///
    /// At least two pins are required (the key in use and a backup), so that a key rotation does not lock every
    /// installed app out (OWASP MASVS-NETWORK-2; OkHttp's `CertificatePinner` warns the same). A pin may be the
    /// leaf's key, an intermediate's or a root's: the chain must contain one of them.
    public struct PinSet: Hashable, Sendable {
        /// `api.example.com`, or `*.example.com` (exactly one label), or `**.example.com` (any number of labels,
        /// `example.com` itself included, as OkHttp's `CertificatePinner` reads it).
        public let host: String
        /// The base64 SHA-256 SPKI hashes.
        public let pins: Set<String>

        /// A pin set for `host`.
        ///
        /// - Throws: ``TLSOptions/Error`` when fewer than two distinct pins are given, a pin is not the base64 of
        ///   32 bytes, or `host` is not a host name, an IP address or one of the patterns above (a URL, a port, a
        ///   `*` elsewhere would match no connection, and pin nothing).
        public init(host: String, pins: Set<String>) throws {
            guard pins.count >= 2 else {
                throw Error("pinning \(host) needs at least two pins (the key in use and a backup), got \(pins.count)")
            }
            for pin in pins where Data(base64Encoded: pin)?.count != 32 {
                throw Error("the pin \"\(pin.prefix(64))\" for \(host) is not the base64 of a SHA-256 hash")
            }
            let canonical = TLSOptions.canonicalHost(host)
            guard Self.isPattern(canonical) else {
                throw Error(
                    "the pinned host \"\(host.prefix(64))\" is not a host name, an IP address, *.example.com or "
                        + "**.example.com (no scheme, port, path or other wildcard): it would pin no connection")
            }
            self.host = canonical
            self.pins = pins
        }

        /// Whether `host` (canonical) is a name or address, after at most one leading `*.` or `**.`.
        private static func isPattern(_ host: String) -> Bool {
            let name = host.hasPrefix("**.") ? host.dropFirst(3) : host.hasPrefix("*.") ? host.dropFirst(2) : host[...]
            guard !name.isEmpty, !name.hasPrefix(".") else { return false }
            if name.contains(":") {
                // An IPv6 address (canonical: without brackets), never under a wildcard.
                return name.count == host.count && name.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
            }
            return name.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"),
                    UInt8(ascii: "."), UInt8(ascii: "_"):
                    true
                default: false
                }
            }
        }

        /// Whether this set applies to `host` (already canonical).
        func matches(canonicalHost host: String) -> Bool {
            if self.host.hasPrefix("**.") {
                // Any number of labels, none included: `**.example.com` pins `example.com` too.
                return host == self.host.dropFirst(3) || host.hasSuffix(self.host.dropFirst(2))
            }
            if self.host.hasPrefix("*.") {
                let suffix = self.host.dropFirst(1)
                guard host.hasSuffix(suffix) else { return false }
                let label = host.dropLast(suffix.count)
                return !label.isEmpty && !label.contains(".")
            }
            return host == self.host
        }
    }

    /// A TLS setting that cannot be used: what is wrong with it.
    public struct Error: Swift.Error, Hashable, Sendable, CustomStringConvertible {
        /// What is wrong.
        public let description: String

        init(_ description: String) { self.description = description }
    }
}

/// PEM blocks (RFC 7468).
enum PEM {
    /// The DER bytes of every block labelled `label` in `text`.
    static func blocks(in text: String, label: String) throws -> [[UInt8]] {
        var blocks: [[UInt8]] = []
        var body: String?
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed == "-----BEGIN \(label)-----" {
                body = ""
            } else if trimmed == "-----END \(label)-----" {
                guard let encoded = body, let der = Data(base64Encoded: encoded) else {
                    throw TLSOptions.Error("a PEM \(label) block is not valid base64")
                }
                blocks.append([UInt8](der))
                body = nil
            } else if body != nil {
                body? += trimmed
            }
        }
        return blocks
    }
}
