/// Which credential version signed a request, recognised from its `Authorization` header.
///
/// It keeps a keyed hash of each recent `Authorization` value (never the value itself), so a 401 can be traced
/// to the credential that caused it without holding or logging the token twice. Lookups are synchronous (a
/// decision's `shouldApply` cannot suspend); the lock is held only for the few comparisons.
final class SignatureLedger: Sendable {
    private struct Entry {
        let version: Int
        let fingerprint: Int
    }

    /// How many versions are remembered; older signatures are forgotten (their 401s are not refreshed).
    static let capacity = 16

    private let entries = LockedBox<[Entry]>([])

    /// A change of the credential that signs requests, for observers such as ``HTTPCache``.
    enum Change: Sendable {
        /// A credential was installed (signed in, refreshed or loaded) and signs requests from now on.
        case installed(authorization: String)
        /// Every credential was forgotten (signed out, or signed in afresh).
        case cleared
    }

    private let observers = LockedBox<[@Sendable (Change) -> Void]>([])

    /// Calls `observer` synchronously on every later change, before the change's caller goes on.
    func observe(_ observer: @escaping @Sendable (Change) -> Void) {
        observers.withLock { $0.append(observer) }
    }

    private func notify(_ change: Change) {
        for observer in observers.withLock({ $0 }) { observer(change) }
    }

    /// Remembers that `credential` signs requests with its ``Credential/authorizationValue``.
    func record(_ credential: Credential) {
        let entry = Entry(version: credential.version, fingerprint: Self.fingerprint(credential.authorizationValue))
        entries.withLock { entries in
            entries.removeAll { $0.version == entry.version }
            entries.append(entry)
            if entries.count > Self.capacity { entries.removeFirst(entries.count - Self.capacity) }
        }
        notify(.installed(authorization: credential.authorizationValue))
    }

    /// The version of the credential whose `Authorization` value is `authorization`, if it is a recent one.
    func version(signing authorization: String) -> Int? {
        let fingerprint = Self.fingerprint(authorization)
        return entries.withLock { entries in entries.last { $0.fingerprint == fingerprint }?.version }
    }

    /// Forgets every signature (a new session starts).
    func removeAll() {
        entries.withLock { $0.removeAll() }
        notify(.cleared)
    }

    /// A SipHash of `value` under the process's random seed: equal for equal values, useless to an attacker.
    private static func fingerprint(_ value: String) -> Int {
        var hasher = Hasher()
        hasher.combine(value)
        return hasher.finalize()
    }
}
