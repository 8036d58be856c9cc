#if AsyncHTTPClient
    import AsyncHTTPClient
    import CourierCore
    import Foundation
    import HTTPTypes
    import NIOSSL

    /// `TLSOptions` mapped onto NIOSSL's `TLSConfiguration`, one configuration per options and host.
    ///
    /// AsyncHTTPClient pools connections by TLS configuration, so a request with other options never reuses a
    /// connection made with relaxed ones, and the same options always map to an equal value
    /// (cached here) so connections are reused.
    ///
    /// Pins: AsyncHTTPClient gives no access to a connection's certificates, so a pin set is enforced by trusting,
    /// for that host, only the trust anchors (the configured extra roots and the system's roots) whose key is
    /// pinned: a chain that does not lead to a pinned key fails the handshake before any request byte is sent. A pin
    /// set none of whose keys belongs to such a root (a leaf or intermediate pin) cannot be enforced here and fails
    /// the call with `CourierError.Code.unsupported`.
    ///
    /// Configurations are cached, failures are not (a client identity's files that do not exist yet are read again
    /// at the next call). A client identity read from files (`.pemFiles`) is read again when either file changes
    /// (its inode, size or modification time, through symbolic links: a certificate rotated in place, or by a
    /// Kubernetes secret's link swap), so the next connections present the new certificate; that costs two
    /// `stat` calls per request with such an identity.
    enum TLSMapping {
        private struct Key: Hashable {
            let options: TLSOptions
            let host: String
            /// The transport's own base configuration (``Base/id``); `nil` for ``baseConfiguration``.
            let base: UUID?
        }

        /// The TLS configuration a transport made from an AsyncHTTPClient configuration starts from: that
        /// configuration's own (its roots, identity, ciphers), raised to TLS 1.2 or later.
        struct Base: Sendable {
            /// Tells this transport's cached configurations from another's.
            let id = UUID()
            let configuration: TLSConfiguration

            /// `configuration`, or NIOSSL's default when it is `nil`, with a minimum of TLS 1.2: NIOSSL's
            /// `makeClientConfiguration()` accepts TLS 1.0, which ``TLSOptions`` never does unless its
            /// `minimumVersion` is lowered.
            init(_ configuration: TLSConfiguration?) {
                var configuration = configuration ?? TLSConfiguration.makeClientConfiguration()
                switch configuration.minimumTLSVersion {
                case .tlsv1, .tlsv11: configuration.minimumTLSVersion = .tlsv12
                case .tlsv12, .tlsv13: break
                }
                self.configuration = configuration
            }
        }

        private struct Entry {
            let configuration: TLSConfiguration
            /// The client identity's files as they were when read; `nil` without such files.
            let files: [FileVersion?]?
        }

        /// What tells one version of a file from the next.
        struct FileVersion: Equatable {
            var device: UInt64
            var inode: UInt64
            var size: Int64
            var modified: Int64
            var modifiedNanoseconds: Int64

            /// The version of the file at `path` (following links); `nil` when it cannot be read.
            init?(path: String) {
                var info = stat()
                guard stat(path, &info) == 0 else { return nil }
                device = UInt64(truncatingIfNeeded: info.st_dev)
                inode = UInt64(truncatingIfNeeded: info.st_ino)
                size = Int64(info.st_size)
                #if canImport(Darwin)
                    modified = Int64(info.st_mtimespec.tv_sec)
                    modifiedNanoseconds = Int64(info.st_mtimespec.tv_nsec)
                #else
                    modified = Int64(info.st_mtim.tv_sec)
                    modifiedNanoseconds = Int64(info.st_mtim.tv_nsec)
                #endif
            }
        }

        /// The configurations made so far; emptied when it reaches ``cacheLimit`` entries (one per options and
        /// host, so only a client calling many hosts with custom TLS options gets there).
        private static let cache = LockedBox<[Key: Entry]>([:])
        static let cacheLimit = 512

        /// The roots `base` trusts, which "the system's roots" stands for on a transport made from an AsyncHTTPClient
        /// configuration: its `trustRoots` (the system's when `nil` or `.default`) and `additionalTrustRoots`. A
        /// file or directory that cannot be read adds nothing.
        static func roots(of base: TLSConfiguration) -> [NIOSSLCertificate] {
            func read(_ path: String) -> [NIOSSLCertificate] {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return [] }
                guard isDirectory.boolValue else { return (try? NIOSSLCertificate.fromPEMFile(path)) ?? [] }
                let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                return names.sorted().flatMap { (try? NIOSSLCertificate.fromPEMFile(path + "/" + $0)) ?? [] }
            }
            var roots: [NIOSSLCertificate]
            switch base.trustRoots {
            case .certificates(let certificates): roots = certificates
            case .file(let path): roots = read(path)
            case .default, nil: roots = SystemRoots.certificates
            }
            for additional in base.additionalTrustRoots {
                switch additional {
                case .certificates(let certificates): roots += certificates
                case .file(let path): roots += read(path)
                }
            }
            return roots
        }

        /// The configuration AsyncHTTPClient uses for the process-wide clients: TLS 1.2 or later.
        static var baseConfiguration: TLSConfiguration {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.minimumTLSVersion = .tlsv12
            return configuration
        }

        /// The per-request configuration for `options` and the host of `request`, or `nil` for the defaults (the
        /// client's own: no per-call work then).
        ///
        /// - Parameter base: What the configuration starts from: the transport's own (``Base``), or `nil` for
        ///   ``baseConfiguration``.
        static func configuration(
            for options: TLSOptions, request: HTTPRequest, base: Base? = nil
        ) throws -> TLSConfiguration? {
            var defaults = TLSOptions.default
            defaults.httpVersions = options.httpVersions
            guard options != defaults, let origin = request.url.flatMap(Origin.init(url:)) else { return nil }
            let key = Key(options: options, host: origin.host, base: base?.id)
            let files = options.clientIdentity?.files.map { $0.map { FileVersion(path: $0.path) } }
            // A file that cannot be read right now (mid-replacement) leaves the identity read before in use.
            if let cached = cache.withLock({ $0[key] }), cached.files == files || files?.contains(nil) == true {
                return cached.configuration
            }
            // Versions taken before the files are read: a change while they are read is seen at the next call.
            let configuration = try make(options, host: key.host, base: base?.configuration ?? baseConfiguration)
            cache.withLock { cache in
                if cache.count >= cacheLimit { cache.removeAll() }
                cache[key] = Entry(configuration: configuration, files: files)
            }
            return configuration
        }

        private static func make(
            _ options: TLSOptions, host: String, base: TLSConfiguration
        ) throws(CourierError) -> TLSConfiguration {
            var configuration = base
            // The options go on top of the base: its stricter minimum (TLS 1.3 set in `init(clientConfiguration:)`)
            // stays, unless the options lower it on purpose, below TLS 1.2 (the options' default, which says nothing).
            configuration.minimumTLSVersion =
                options.minimumVersion < .tls12 || base.minimumTLSVersion != .tlsv13
                ? version(options.minimumVersion) : .tlsv13
            do {
                let extra = try options.trust.certificates.map { try NIOSSLCertificate(bytes: $0.der, format: .der) }
                switch options.trust {
                case .system: break
                case .systemAnd: configuration.additionalTrustRoots += [.certificates(extra)]
                case .only:
                    // Only these: also none of the base configuration's additional roots.
                    configuration.trustRoots = .certificates(extra)
                    configuration.additionalTrustRoots = []
                }
                // Options that say what to trust are checked even on a base configuration that checks nothing
                // (`certificateVerification = .none` in `init(clientConfiguration:)`): applied on top, never
                // ignored. A base that skips only the host name (`.noHostnameVerification`) keeps doing so.
                if options.pinSet(for: host) != nil || options.trust != .system,
                    configuration.certificateVerification == .none
                {
                    configuration.certificateVerification = .fullVerification
                }
                if let pinSet = options.pinSet(for: host) {
                    var candidates = extra
                    if options.trust.includesSystemRoots { candidates += roots(of: base) }
                    let anchors = candidates.filter { certificate in
                        guard let spki = try? certificate.extractPublicKey().toSPKIBytes() else { return false }
                        return pinSet.pins.contains(Data(SHA256.hash(spki)).base64EncodedString())
                    }
                    guard !anchors.isEmpty else {
                        throw CourierError(
                            code: .unsupported,
                            stage: .transport,
                            message: "unsupported: pinning \(host) to keys that are not a trusted root's: "
                                + "AsyncHTTPClient exposes no connection's certificates, so pins must name a root key "
                                + "(of the system's roots or the configured trust)"
                        )
                    }
                    configuration.trustRoots = .certificates(anchors)
                    configuration.additionalTrustRoots = []
                }
                if options.allowsInsecureLoopback, TLSOptions.isLoopback(host), options.pinSet(for: host) == nil {
                    configuration.certificateVerification = .none
                }
                if let identity = options.clientIdentity {
                    let (chain, key) = try identity.load()
                    configuration.certificateChain = try NIOSSLCertificate.fromPEMBytes(Array(chain.utf8))
                        .map { .certificate($0) }
                    configuration.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(key.utf8), format: .pem))
                    try checkKeyPair(of: configuration)
                }
            } catch let error as CourierError {
                throw error
            } catch {
                throw CourierError(
                    code: .invalidConfiguration,
                    stage: .transport,
                    message: "the TLS options cannot be used: \(error)",
                    underlyingError: error
                )
            }
            return configuration
        }

        /// Throws ``CourierError/Code/invalidConfiguration`` when the client certificate's key is not its private
        /// key's. BoringSSL finds out only as AsyncHTTPClient builds a connection's context, and a failure there
        /// came back as a connection that could not be made, which was retried. A context with the identity alone
        /// (no roots to load) checks the pair, once per options and host (the configurations are cached).
        private static func checkKeyPair(of configuration: TLSConfiguration) throws(CourierError) {
            var identity = TLSConfiguration.makeClientConfiguration()
            identity.trustRoots = .certificates([])
            identity.certificateChain = configuration.certificateChain
            identity.privateKey = configuration.privateKey
            do {
                _ = try NIOSSLContext(configuration: identity)
            } catch {
                throw CourierError(
                    code: .invalidConfiguration,
                    stage: .transport,
                    message: "the client certificate does not belong to its private key (TLSOptions.clientIdentity: "
                        + "the chain's first certificate must be the key's): \(error)",
                    underlyingError: error
                )
            }
        }

        private static func version(_ version: TLSOptions.Version) -> TLSVersion {
            switch version {
            case .tls10: .tlsv1
            case .tls11: .tlsv11
            case .tls12: .tlsv12
            case .tls13: .tlsv13
            }
        }
    }

    extension TLSOptions.ClientIdentity {
        /// The files the identity is read from (chain, key); `nil` for PEM text.
        var files: [URL]? {
            switch self {
            case .pem: nil
            case .pemFiles(let chain, let key): [chain, key]
            }
        }

        /// The PEM texts of the chain and the key.
        func load() throws -> (chain: String, key: String) {
            switch self {
            case .pem(let chain, let key):
                return (chain, key)
            case .pemFiles(let chain, let key):
                return (try String(contentsOf: chain, encoding: .utf8), try String(contentsOf: key, encoding: .utf8))
            }
        }
    }

    /// The system's root certificates, read once (for matching pins to trust anchors).
    enum SystemRoots {
        static let certificates: [NIOSSLCertificate] = {
            let paths = [
                "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/ca-bundle.pem",
                "/etc/ssl/cert.pem",
            ]
            for path in paths where FileManager.default.fileExists(atPath: path) {
                if let roots = try? NIOSSLCertificate.fromPEMFile(path), !roots.isEmpty { return roots }
            }
            return []
        }()
    }
#endif
