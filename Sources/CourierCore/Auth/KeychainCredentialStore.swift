#if canImport(Security)
    import Foundation
    import Security

    /// A ``CredentialStore`` that keeps the credential in the Keychain, as a generic password item identified by
    /// a service and an account.
    ///
    /// The item is readable after the device's first unlock and never leaves the device (no iCloud Keychain
    /// sync, no backup restore to another device). The credential is stored as JSON in the item's data.
    ///
    /// On macOS the item goes into the file-based login keychain unless `usesDataProtectionKeychain` is set: that
    /// keychain does not sync either, but ignores the accessibility class (Apple: `kSecAttrAccessible` applies on
    /// macOS only with `kSecUseDataProtectionKeychain`). The data protection keychain needs a signed app with a
    /// keychain access group entitlement (without one, every call fails with `errSecMissingEntitlement`, -34018).
    ///
    /// ```swift
    /// let store = KeychainCredentialStore(service: "com.example.myapp.oauth", account: "default")
    /// ```
    public struct KeychainCredentialStore: CredentialStore {
        /// The item's service (`kSecAttrService`), such as your bundle identifier plus `.oauth`.
        public let service: String
        /// The item's account (`kSecAttrAccount`), to keep several credentials apart.
        public let account: String
        /// Whether the item is in the data protection keychain on macOS (`kSecUseDataProtectionKeychain`), as on
        /// iOS, where it always is.
        public let usesDataProtectionKeychain: Bool

        /// Creates a store for the generic password item `service` / `account`.
        public init(service: String, account: String = "default", usesDataProtectionKeychain: Bool = false) {
            self.service = service
            self.account = account
            self.usesDataProtectionKeychain = usesDataProtectionKeychain
        }

        private var query: [String: Any] {
            var query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                kSecAttrAccount as String: account,
            ]
            if usesDataProtectionKeychain { query[kSecUseDataProtectionKeychain as String] = true }
            return query
        }

        /// Reads the item; `nil` when there is none.
        ///
        /// - Throws: ``CourierError/Code/credentialStoreFailed`` on a Keychain error or undecodable data.
        public func load() async throws -> Credential? {
            var search = query
            search[kSecReturnData as String] = true
            search[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: CFTypeRef?
            let status = SecItemCopyMatching(search as CFDictionary, &result)
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess, let data = result as? Data else {
                throw Self.failure("could not read the Keychain item", status: status)
            }
            do {
                return try JSONDecoder().decode(Credential.self, from: data)
            } catch {
                throw CourierError(
                    code: .credentialStoreFailed,
                    stage: .adapt,
                    message: "the Keychain item does not hold a valid credential; sign in again"
                )
            }
        }

        /// Updates the item, or adds it when there is none.
        ///
        /// - Throws: ``CourierError/Code/credentialStoreFailed`` on a Keychain error.
        public func save(_ credential: Credential) async throws {
            let data: Data
            do {
                data = try JSONEncoder().encode(credential)
            } catch {
                throw CourierError(code: .credentialStoreFailed, stage: .adapt, message: "could not encode it")
            }
            let attributes: [String: Any] = [
                kSecValueData as String: data,
                kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
            ]
            var status = SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
            if status == errSecItemNotFound {
                let item = query.merging(attributes) { _, new in new }
                status = SecItemAdd(item as CFDictionary, nil)
            }
            guard status == errSecSuccess else {
                throw Self.failure("could not save the Keychain item", status: status)
            }
        }

        /// Deletes the item; succeeds when there is none.
        ///
        /// - Throws: ``CourierError/Code/credentialStoreFailed`` on a Keychain error.
        public func clear() async throws {
            let status = SecItemDelete(query as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else {
                throw Self.failure("could not delete the Keychain item", status: status)
            }
        }

        private static func failure(_ message: String, status: OSStatus) -> CourierError {
            let reason = SecCopyErrorMessageString(status, nil).map { $0 as String } ?? "OSStatus \(status)"
            return CourierError(code: .credentialStoreFailed, stage: .adapt, message: "\(message): \(reason)")
        }
    }
#endif
