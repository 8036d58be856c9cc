import HTTPTypes

/// Sets `User-Agent`, unless the request already has one.
///
/// The client runs ``UserAgentAdapter/courier`` by default, so every request names the library; a request or a
/// client adapter that sets its own `User-Agent` earlier wins.
public struct UserAgentAdapter: InPlaceAdapter {
    /// The value to send.
    public let userAgent: String
    /// Whether an existing `User-Agent` is replaced.
    public let replacesExisting: Bool
    /// Whether `userAgent` passed the header-value check, done once here rather than on every call. A `Bool`, not the
    /// built field: the adapter then still fits in an existential's inline buffer (three words), where a larger one
    /// costs an allocation each time the client's adapter list is built (issue #17).
    private let isValid: Bool

    /// Creates a user-agent adapter.
    public init(_ userAgent: String, replacesExisting: Bool = false) {
        self.userAgent = userAgent
        self.replacesExisting = replacesExisting
        self.isValid = (try? HeaderValidation.validatedValue(userAgent, for: "User-Agent")) != nil
    }

    /// `userAgent`.
    public var name: String { "userAgent" }

    /// `Courier/<version> (<OS>)`.
    public static let courier = UserAgentAdapter("Courier/\(CourierLibrary.version) (\(CourierLibrary.platformName))")

    /// Sets the header.
    public func adapt(_ request: inout OutgoingRequest, context: AdapterContext) async throws {
        guard replacesExisting || request.head.headerFields[.userAgent] == nil else { return }
        request.head.headerFields[.userAgent] =
            isValid ? userAgent : try HeaderValidation.validatedValue(userAgent, for: "User-Agent")
    }
}

extension RequestAdapter where Self == UserAgentAdapter {
    /// Sets `User-Agent`, replacing any earlier value.
    public static func userAgent(_ value: String) -> UserAgentAdapter {
        UserAgentAdapter(value, replacesExisting: true)
    }
}

/// Facts about the library itself.
public enum CourierLibrary {
    /// The library version, as sent in the default `User-Agent`.
    public static let version = "0.1.0"

    /// The operating system name used in the default `User-Agent`.
    public static var platformName: String {
        #if os(Linux)
            "Linux"
        #elseif os(macOS)
            "macOS"
        #elseif os(iOS)
            "iOS"
        #elseif os(tvOS)
            "tvOS"
        #elseif os(watchOS)
            "watchOS"
        #elseif os(visionOS)
            "visionOS"
        #elseif os(Windows)
            "Windows"
        #else
            "unknown"
        #endif
    }
}
