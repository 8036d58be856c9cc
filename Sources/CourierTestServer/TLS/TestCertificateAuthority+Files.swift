#if TestServer
    public import Foundation

    /// Where ``TestCertificateAuthority/writePEMFiles(to:)`` put each PEM file.
    public struct TestCertificateFiles: Sendable, Equatable {
        /// `root-ca.pem`: the root certificate, to trust (nginx `ssl_client_certificate`, curl `--cacert`).
        public let rootCertificate: URL

        /// `server-chain.pem`: the server certificate then the intermediate (nginx `ssl_certificate`).
        public let serverCertificateChain: URL

        /// `server-key.pem`: the server certificate's PKCS #8 private key (nginx `ssl_certificate_key`).
        public let serverPrivateKey: URL

        /// `client-cert.pem`: the client certificate then the intermediate (curl `--cert`).
        public let clientCertificateChain: URL

        /// `client-key.pem`: the client certificate's PKCS #8 private key (curl `--key`).
        public let clientPrivateKey: URL
    }

    extension TestCertificateAuthority {
        /// Writes the root, the server chain and key, and the client chain and key as PEM files into `directory`.
        ///
        /// Meant for a real server (nginx, say) that a test script starts later: it then presents
        /// ``serverCertificate``, with the same SPKI pin as a ``TestServer`` in ``TestServerTLS/Mode/valid`` mode
        /// using this authority. The directory is created when missing; existing files are replaced. Key files are
        /// made readable by the owner only.
        ///
        /// ```swift
        /// let files = try authority.writePEMFiles(to: URL(fileURLWithPath: "/tmp/courier-tls"))
        /// // nginx: ssl_certificate files.serverCertificateChain.path; ssl_certificate_key files.serverPrivateKey.path
        /// ```
        ///
        /// - Parameter directory: A directory URL.
        /// - Returns: The URL of each file written.
        /// - Throws: Foundation's error when the directory cannot be created or a file cannot be written.
        @discardableResult
        public func writePEMFiles(to directory: URL) throws -> TestCertificateFiles {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let files = TestCertificateFiles(
                rootCertificate: directory.appendingPathComponent("root-ca.pem"),
                serverCertificateChain: directory.appendingPathComponent("server-chain.pem"),
                serverPrivateKey: directory.appendingPathComponent("server-key.pem"),
                clientCertificateChain: directory.appendingPathComponent("client-cert.pem"),
                clientPrivateKey: directory.appendingPathComponent("client-key.pem")
            )
            try Data(root.certificatePEM.utf8).write(to: files.rootCertificate, options: .atomic)
            try Data(serverCertificate.chainPEM.utf8).write(to: files.serverCertificateChain, options: .atomic)
            try Data(clientCertificate.chainPEM.utf8).write(to: files.clientCertificateChain, options: .atomic)
            for (key, url) in [
                (serverCertificate, files.serverPrivateKey), (clientCertificate, files.clientPrivateKey),
            ] {
                // Created with its final permissions, so the key is never readable by others, not even briefly.
                try? FileManager.default.removeItem(at: url)
                let attributes: [FileAttributeKey: Any] = [.posixPermissions: 0o600]
                guard
                    FileManager.default.createFile(
                        atPath: url.path, contents: Data(key.privateKeyPEM.utf8), attributes: attributes)
                else {
                    throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
                }
            }
            return files
        }
    }
#endif
