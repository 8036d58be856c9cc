#if TestServer
    import Crypto
    public import Foundation
    import SwiftASN1
    import X509

    /// A certificate and its private key, generated at run time by ``TestCertificateAuthority``.
    ///
    /// Nothing here is ever read from or committed to disk: every key is made fresh by the process that uses it.
    /// The encodings are the ones other tools expect, so the values can be handed to NIOSSL, `URLSession`, curl or
    /// nginx as they are.
    ///
    /// ```swift
    /// let authority = try TestCertificateAuthority()
    /// let pin = authority.serverCertificate.spkiSHA256Base64  // what a pinning client compares against
    /// ```
    public struct TestCertificate: Sendable {
        /// The certificate, PEM-encoded (`-----BEGIN CERTIFICATE-----`).
        public let certificatePEM: String

        /// The certificate, DER-encoded.
        public let certificateDER: [UInt8]

        /// The private key, PEM-encoded PKCS #8 (`-----BEGIN PRIVATE KEY-----`), a P-256 key.
        public let privateKeyPEM: String

        /// The private key, DER-encoded PKCS #8.
        public let privateKeyDER: [UInt8]

        /// This certificate followed by the intermediates that lead to its root, root excluded, PEM-encoded.
        ///
        /// What a server (or an mTLS client) sends in its handshake. For a root, or a self-signed certificate, it is
        /// the certificate alone.
        public let chainPEM: String

        /// The certificates of ``chainPEM``, each DER-encoded, this certificate first.
        public let chainDER: [[UInt8]]

        /// The SubjectPublicKeyInfo of the certificate's key, DER-encoded.
        public let subjectPublicKeyInfoDER: [UInt8]

        /// The base64 of the SHA-256 of ``subjectPublicKeyInfoDER``: the usual public-key pin.
        ///
        /// The same value as `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der |
        /// openssl dgst -sha256 -binary | base64` prints for ``certificatePEM``.
        public let spkiSHA256Base64: String

        /// The subject's common name.
        public let commonName: String

        /// The first instant the certificate is valid.
        public let notValidBefore: Date

        /// The last instant the certificate is valid.
        public let notValidAfter: Date

        /// The parsed certificate, to sign with or to read names from.
        let certificate: Certificate

        /// The certificate's private key, to sign certificates this one issues.
        let privateKey: P256.Signing.PrivateKey

        /// The chain above this certificate, root excluded: what ``chainPEM`` appends after it.
        let issuers: [TestCertificate.Link]

        /// One certificate of a chain, without its key.
        struct Link: Sendable {
            let pem: String
            let der: [UInt8]
        }

        init(certificate: Certificate, privateKey: P256.Signing.PrivateKey, commonName: String, issuers: [Link]) throws
        {
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            let der = serializer.serializedBytes
            let pem = PEMDocument(type: "CERTIFICATE", derBytes: der).pemString + "\n"
            let spki = [UInt8](privateKey.publicKey.derRepresentation)
            self.certificate = certificate
            self.privateKey = privateKey
            self.issuers = issuers
            self.commonName = commonName
            self.certificateDER = der
            self.certificatePEM = pem
            self.privateKeyPEM = privateKey.pemRepresentation + "\n"
            self.privateKeyDER = [UInt8](privateKey.derRepresentation)
            self.chainPEM = ([pem] + issuers.map(\.pem)).joined()
            self.chainDER = [der] + issuers.map(\.der)
            self.subjectPublicKeyInfoDER = spki
            self.spkiSHA256Base64 = Data(SHA256.hash(data: spki)).base64EncodedString()
            self.notValidBefore = certificate.notValidBefore
            self.notValidAfter = certificate.notValidAfter
        }

        /// This certificate as a link of the chain of the certificates it issues.
        var link: Link {
            Link(pem: certificatePEM, der: certificateDER)
        }
    }
#endif
