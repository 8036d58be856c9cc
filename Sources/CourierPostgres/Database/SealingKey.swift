#if Postgres
    import Crypto
    import Foundation

    /// The application's key, split by HKDF into one subkey per use, so a credential, a cached response and a digest
    /// never share key material. Nothing derived from it is written to the database but ciphertext and HMACs.
    struct SealingKey: Sendable {
        private let sealing: SymmetricKey
        private let digesting: SymmetricKey
        /// The sealing subkeys of keys being rotated out: values sealed under them still open.
        private let previousSealing: [SymmetricKey]

        /// Subkeys of `key` for `purpose` (`"credentials"`, `"cache"`); values sealed under one of `previousKeys`
        /// open too (a key rotation).
        init(_ key: SymmetricKey, purpose: String, previousKeys: [SymmetricKey] = []) {
            sealing = Self.sealingSubkey(of: key, purpose: purpose)
            digesting = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: key, info: Data("courier.\(purpose).digest.v1".utf8), outputByteCount: 32)
            previousSealing = previousKeys.map { Self.sealingSubkey(of: $0, purpose: purpose) }
        }

        private static func sealingSubkey(of key: SymmetricKey, purpose: String) -> SymmetricKey {
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: key, info: Data("courier.\(purpose).seal.v1".utf8), outputByteCount: 32)
        }

        /// AES-GCM of `plaintext` (nonce, ciphertext and tag in one value), bound to `context`: a row copied under
        /// another name or generation does not open.
        func seal(_ plaintext: Data, context: String) throws -> Data {
            let box = try AES.GCM.seal(plaintext, using: sealing, authenticating: Data(context.utf8))
            guard let combined = box.combined else {
                throw PostgresFailure.make("sealing with AES-GCM produced no combined value")
            }
            return combined
        }

        /// The plaintext of `sealed`, or an error when it was sealed under another key or context, or altered.
        func open(_ sealed: Data, context: String) throws -> Data {
            do {
                let box = try AES.GCM.SealedBox(combined: sealed)
                for key in [sealing] + previousSealing {
                    if let plaintext = try? AES.GCM.open(box, using: key, authenticating: Data(context.utf8)) {
                        return plaintext
                    }
                }
                throw CryptoKitError.authenticationFailure
            } catch {
                throw PostgresFailure.make(
                    "a sealed value (\(context)) does not open with the configured key: the key changed, or the row "
                        + "was altered or copied")
            }
        }

        /// The raw bytes of this key's digest subkey, for an HMAC-keyed partition.
        var digestKeyBytes: [UInt8] { digesting.withUnsafeBytes { Array($0) } }

        /// A hex HMAC-SHA256 of `text` under the digest subkey.
        func digest(_ text: String) -> String {
            HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: digesting)
                .map { String(format: "%02x", $0) }.joined()
        }
    }
#endif
