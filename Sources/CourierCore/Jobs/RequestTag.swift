/// A label for calls in flight, so that a group of them can be cancelled together.
///
/// Give calls tags when you send them, then cancel by tag, for example when a screen closes:
///
/// ```swift
/// let profile = try await client.send(GetProfile(), tags: ["profile-screen"])
/// // elsewhere, when the screen goes away:
/// client.cancelAll(tagged: "profile-screen")
/// ```
public struct RequestTag: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The tag's text.
    public let rawValue: String

    /// Creates a tag.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// Creates a tag from a string literal.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// The tag's text.
    public var description: String { rawValue }
}
