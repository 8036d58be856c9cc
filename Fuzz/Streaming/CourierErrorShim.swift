// The few declarations of CourierCore the streaming parsers use, for building them without SwiftPM (the fuzz
// harness and the throughput benchmark that scripts/fuzz-streaming compiles). Same names and initializer labels
// as the real ones in Sources/CourierCore/Errors and Sources/CourierCore/Parsing, nothing more.

struct CourierError: Error, CustomStringConvertible {
    struct Code: Hashable, CustomStringConvertible {
        let description: String
        static let lineTooLarge = Code(description: "lineTooLarge")
        static let eventTooLarge = Code(description: "eventTooLarge")
        static let decodingFailed = Code(description: "decodingFailed")
    }

    enum Stage: String {
        case parse
    }

    var code: Code
    var stage: Stage
    var message: String?
    var underlyingError: (any Error)?

    init(code: Code, stage: Stage, message: String? = nil, underlyingError: (any Error)? = nil) {
        self.code = code
        self.stage = stage
        self.message = message
        self.underlyingError = underlyingError
    }

    var description: String { "CourierError.\(code) at \(stage.rawValue): \(message ?? "")" }
}

struct DecodingErrorDescription: CustomStringConvertible {
    let error: any Error

    init(_ error: any Error) { self.error = error }

    var description: String { "\(error)" }
}
