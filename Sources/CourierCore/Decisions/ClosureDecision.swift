/// A decision made from closures, for one-off rules.
///
/// ```swift
/// .custom("teapot", when: { $0.status.code == 418 }) { response, _ in .fail(TeapotError()) }
/// ```
public struct ClosureDecision: Decision {
    /// The name shown in traces.
    public let name: String
    private let condition: @Sendable (ReceivedResponse) -> Bool
    private let body: @Sendable (ReceivedResponse, DecisionContext) async throws -> DecisionAction

    /// Creates a decision from closures.
    public init(
        name: String,
        when condition: @escaping @Sendable (ReceivedResponse) -> Bool = { _ in true },
        _ body: @escaping @Sendable (ReceivedResponse, DecisionContext) async throws -> DecisionAction
    ) {
        self.name = name
        self.condition = condition
        self.body = body
    }

    /// Applies when the condition holds.
    public func shouldApply(to response: ReceivedResponse, context: DecisionContext) -> Bool {
        condition(response)
    }

    /// Runs the closure.
    public func decide(_ response: ReceivedResponse, context: DecisionContext) async throws -> DecisionAction {
        try await body(response, context)
    }
}

extension Decision where Self == ClosureDecision {
    /// A decision made from closures.
    public static func custom(
        _ name: String,
        when condition: @escaping @Sendable (ReceivedResponse) -> Bool = { _ in true },
        _ body: @escaping @Sendable (ReceivedResponse, DecisionContext) async throws -> DecisionAction
    ) -> ClosureDecision {
        ClosureDecision(name: name, when: condition, body)
    }
}
