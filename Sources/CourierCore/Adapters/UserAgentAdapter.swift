import HTTPTypes

/// Sets `User-Agent`, unless the request already has one.
///
/// The client runs ``UserAgentAdapter/courier`` by default, so every request names the library; a request or a
/// client adapter that sets its own `User-Agent` earlier wins.
public struct UserAgentAdapter: SynchronousAdapter {
    /// The value to send.
    public let userAgent: String
    /// Whether an existing `User-Agent` is replaced.
    public let replacesExisting: Bool
    /// Whether `userAgent` passed the header-value check, done once here rather than on every call, and whether it is
    /// ``courier``'s, whose field is built once (`libraryField`). Not the built field itself: the adapter then still
    /// fits in an existential's inline buffer (three words), where a larger one costs an allocation each time the
    /// client's adapter list is built (issue #17).
    private let check: Check

    private enum Check: UInt8 {
        case invalid, valid, library
    }

    /// Creates a user-agent adapter.
    public init(_ userAgent: String, replacesExisting: Bool = false) {
        self.userAgent = userAgent
        self.replacesExisting = replacesExisting
        let isValid = (try? HeaderValidation.validatedValue(userAgent, for: "User-Agent")) != nil
        self.check = isValid ? .valid : .invalid
    }

    /// ``courier``: a valid value, sent as the field built once.
    private init(library userAgent: String) {
        self.userAgent = userAgent
        self.replacesExisting = false
        self.check = .library
    }

    /// `userAgent`.
    public var name: String { "userAgent" }

    /// `Courier/<version> (<OS>)`.
    public static let courier = UserAgentAdapter(
        library: "Courier/\(CourierLibrary.version) (\(CourierLibrary.platformName))")

    /// ``courier``'s field, built once: building a field checks its value byte by byte, on every call otherwise.
    private static let libraryField = HTTPField(name: .userAgent, value: courier.userAgent)

    /// Sets the header.
    package func adaptNow(_ request: inout OutgoingRequest, context: AdapterContext) throws {
        guard replacesExisting || request.head.headerFields[.userAgent] == nil else { return }
        switch check {
        case .library:
            // Not replacing: there is no `User-Agent` yet.
            request.head.headerFields.append(Self.libraryField)
        case .valid:
            request.head.headerFields[.userAgent] = userAgent
        case .invalid:
            request.head.headerFields[.userAgent] = try HeaderValidation.validatedValue(userAgent, for: "User-Agent")
        }
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
