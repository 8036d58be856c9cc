import Foundation
public import HTTPTypes

/// Fails the call when the status is not acceptable, decoding the server's error body when it can.
///
/// By default 2xx is acceptable. Any other status fails with ``CourierError/Code/unacceptableStatus``; when the
/// body decodes as `APIError` (with the client's JSON decoder), the decoded value is the error's
/// ``CourierError/underlyingError``, typed:
///
/// ```swift
/// struct APIError: Decodable, Error { let code: Int; let reason: String }
/// var decisions: [any Decision] { [.validateStatus(decoding: APIError.self)] }
/// // 403 {"code":403,"reason":"Invalid Token."} → CourierError(unacceptableStatus, underlyingError: APIError)
/// ```
public struct ValidateStatusDecision<APIError: Decodable & Error>: Decision {
    /// The statuses that pass.
    public let acceptable: @Sendable (HTTPResponse.Status) -> Bool

    /// Creates a status check that decodes error bodies as `APIError`.
    ///
    /// - Parameters:
    ///   - errorType: The type of the server's error body.
    ///   - acceptable: The statuses that pass; default: 200–299.
    public init(
        decoding errorType: APIError.Type,
        acceptable: @escaping @Sendable (HTTPResponse.Status) -> Bool = { $0.kind == .successful }
    ) {
        self.acceptable = acceptable
    }

    /// `validateStatus`.
    public var name: String { "validateStatus" }

    /// Continues for an acceptable status, fails otherwise.
    public func decide(_ response: ReceivedResponse, context: DecisionContext) async throws -> DecisionAction {
        decideNow(response, context: context)
    }

    /// ``decide(_:context:)``, which never waits: the pipeline runs it without an asynchronous call.
    public func _decideWithoutWaiting(_ response: ReceivedResponse, context: DecisionContext) throws
        -> DecisionAction?
    {
        decideNow(response, context: context)
    }

    private func decideNow(_ response: ReceivedResponse, context: DecisionContext) -> DecisionAction {
        guard !acceptable(response.status) else { return .continue(with: response) }
        return .fail(Self.failure(for: response, decoder: context.jsonDecoder))
    }

    /// The error for an unacceptable status. A synchronous function of its own: its `APIError?` local, whose size
    /// depends on the type, made the asynchronous `decide` look up the generic type's metadata on every call,
    /// acceptable or not (1 % of a call, issue #17).
    private static func failure(for response: ReceivedResponse, decoder: JSONDecoder) -> CourierError {
        var apiError: APIError?
        // Why the body is not the API's error, for the developer: a type that does not match, or no JSON at all.
        var undecoded = ""
        if APIError.self != NoAPIError.self, !response.body.isEmpty {
            do {
                apiError = try decoder.decode(APIError.self, from: response.body)
            } catch {
                undecoded = "; its body does not decode as \(APIError.self) (\(DecodingErrorDescription(error)))"
            }
        }
        return CourierError(
            code: .unacceptableStatus,
            stage: .decide,
            message: "the server answered \(StatusText.describe(response.status))\(undecoded)",
            response: response.head,
            underlyingError: apiError
        )
    }
}

extension ValidateStatusDecision: StatusFailureDescribing {
    func failure(for response: ReceivedResponse, context: DecisionContext) -> CourierError? {
        acceptable(response.status) ? nil : Self.failure(for: response, decoder: context.jsonDecoder)
    }
}

/// A decision that can say, without running, how it would fail a response: a decision earlier in the chain that
/// fails the call for its own reason (a `Retry-After` too long to wait) gives the error this one would have given
/// (the server's decoded API error), with its reason added.
protocol StatusFailureDescribing {
    /// The error this decision would fail `response` with, or `nil` when it would let it pass.
    func failure(for response: ReceivedResponse, context: DecisionContext) -> CourierError?
}

/// The error type of a ``ValidateStatusDecision`` that does not decode error bodies.
public struct NoAPIError: Decodable, Error {}

extension ValidateStatusDecision where APIError == NoAPIError {
    /// Creates a status check that keeps error bodies only as an excerpt.
    public init(acceptable: @escaping @Sendable (HTTPResponse.Status) -> Bool = { $0.kind == .successful }) {
        self.init(decoding: NoAPIError.self, acceptable: acceptable)
    }
}

extension Decision where Self == ValidateStatusDecision<NoAPIError> {
    /// Fails on a non-2xx status (or outside `acceptable`).
    public static func validateStatus(
        acceptable: @escaping @Sendable (HTTPResponse.Status) -> Bool = { $0.kind == .successful }
    ) -> Self {
        ValidateStatusDecision(acceptable: acceptable)
    }
}

extension Decision {
    /// Fails on a non-2xx status, decoding the error body as `errorType`.
    public static func validateStatus<E: Decodable & Error>(
        decoding errorType: E.Type,
        acceptable: @escaping @Sendable (HTTPResponse.Status) -> Bool = { $0.kind == .successful }
    ) -> Self where Self == ValidateStatusDecision<E> {
        ValidateStatusDecision(decoding: errorType, acceptable: acceptable)
    }
}
