import Foundation
import HTTPTypes

/// What the pipeline knows about a call so far, for errors and the log line.
struct CallRecord: Sendable {
    var stage: CourierError.Stage = .resolve
    var attempt = 0
    var request: HTTPRequest?
    var response: HTTPResponse?
    var body: Data?
    var bodySize: Int?
    var trace = DecisionTrace()

    mutating func begin(attempt: Int) {
        self.attempt = attempt
        response = nil
        body = nil
        bodySize = nil
    }

    /// `error` as a ``CourierError`` filled with the call's request, response, body excerpt and trace.
    func finalize(_ error: any Error, redactor: Redactor) -> any Error {
        if error is CancellationError { return error }
        var courierError: CourierError
        if let existing = error as? CourierError {
            courierError = existing
        } else {
            courierError = CourierError(
                code: Self.code(for: stage),
                stage: stage,
                message: "\(error)",
                underlyingError: error
            )
        }
        courierError.request = (courierError.request ?? request).map { redactor.redact($0) }
        courierError.response = courierError.response ?? response
        if courierError.bodyExcerpt == nil, let body, !body.isEmpty {
            courierError.bodyExcerpt = redactor.excerpt(of: body, contentType: response?.headerFields[.contentType])
        }
        if courierError.trace.isEmpty { courierError.trace = trace }
        return courierError
    }

    private static func code(for stage: CourierError.Stage) -> CourierError.Code {
        switch stage {
        case .resolve: .invalidURL
        case .adapt: .adapterFailed
        case .validate: .invalidHeader
        case .cache, .transport: .transportFailed
        case .decide: .decisionFailed
        case .parse: .decodingFailed
        }
    }
}
