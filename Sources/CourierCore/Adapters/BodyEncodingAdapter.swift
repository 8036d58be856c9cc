import Foundation
import HTTPTypes

/// Encodes a ``RequestBody`` into bytes and sets `Content-Type`.
///
/// JSON bodies use the client's encoder unless the body names one; form bodies use the client's form encoder.
/// A `Content-Type` the request sets in its headers later wins over the one set here.
public struct BodyEncodingAdapter: SynchronousAdapter {
    /// The body to encode.
    public let body: RequestBody

    /// Creates a body-encoding adapter.
    public init(_ body: RequestBody) { self.body = body }

    /// `body`.
    public var name: String { "body" }

    /// Encodes the body.
    package func adaptNow(_ request: inout OutgoingRequest, context: AdapterContext) throws {
        let contentType: String?
        do {
            switch body.kind {
            case .json(let value, let encoder):
                request.body = MessageBody(try (encoder ?? context.jsonEncoder).encode(value))
                contentType = "application/json"
            case .form(let value, let encoder):
                request.body = MessageBody(Array(try (encoder ?? context.formEncoder).encode(value).utf8))
                contentType = "application/x-www-form-urlencoded"
            case .bytes(let bytes, let type):
                request.body = bytes
                contentType = type
            case .deferred(let make):
                return try BodyEncodingAdapter(try make()).adaptNow(&request, context: context)
            }
        } catch let error as CourierError {
            throw error
        } catch {
            throw CourierError(
                code: .encodingFailed,
                stage: .adapt,
                message: "could not encode the body: \(error)",
                underlyingError: error
            )
        }
        if let contentType {
            request.head.headerFields[.contentType] = try HeaderValidation.validatedValue(
                contentType,
                for: "Content-Type"
            )
        }
    }
}

extension RequestAdapter where Self == BodyEncodingAdapter {
    /// Encodes a body and sets `Content-Type`.
    public static func body(_ body: RequestBody) -> BodyEncodingAdapter { BodyEncodingAdapter(body) }
}
