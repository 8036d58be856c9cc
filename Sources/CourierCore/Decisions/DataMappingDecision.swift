public import Foundation

/// Replaces the body when a condition holds: "empty body → `{}`", or dummy data for a server that
/// is not ready yet.
///
/// ```swift
/// var decisions: [any Decision] { [.validateStatus(), .mapEmptyBody()] }
/// #if SERVER_NOT_READY
/// var decisions: [any Decision] { [.mapData(when: { _ in true }) { _ in Data(#"{"dummy":"data"}"#.utf8) }] }
/// #endif
/// ```
public struct DataMappingDecision: Decision {
    /// The name shown in traces.
    public let name: String
    private let condition: @Sendable (ReceivedResponse) -> Bool
    private let transform: @Sendable (ReceivedResponse) throws -> Data

    /// Creates a mapping decision.
    ///
    /// - Parameters:
    ///   - name: The name shown in traces; default `mapData`.
    ///   - condition: Whether to replace the body of this response.
    ///   - transform: The new body; a thrown error fails the call.
    public init(
        name: String = "mapData",
        when condition: @escaping @Sendable (ReceivedResponse) -> Bool,
        transform: @escaping @Sendable (ReceivedResponse) throws -> Data
    ) {
        self.name = name
        self.condition = condition
        self.transform = transform
    }

    /// Applies when the condition holds.
    public func shouldApply(to response: ReceivedResponse, context: DecisionContext) -> Bool {
        condition(response)
    }

    /// Continues with the transformed body.
    public func decide(_ response: ReceivedResponse, context: DecisionContext) async throws -> DecisionAction {
        var response = response
        response.body = try transform(response)
        return .continue(with: response)
    }
}

extension Decision where Self == DataMappingDecision {
    /// Replaces the body with `transform(response)` when `condition(response)` holds.
    public static func mapData(
        when condition: @escaping @Sendable (ReceivedResponse) -> Bool,
        transform: @escaping @Sendable (ReceivedResponse) throws -> Data
    ) -> DataMappingDecision {
        DataMappingDecision(when: condition, transform: transform)
    }

    /// Replaces an empty body with `replacement` (by default the JSON object `{}`), so a `Decodable` response
    /// whose properties are all optional decodes from an empty 200.
    public static func mapEmptyBody(to replacement: Data = Data("{}".utf8)) -> DataMappingDecision {
        DataMappingDecision(name: "mapEmptyBody", when: { $0.body.isEmpty }, transform: { _ in replacement })
    }
}
