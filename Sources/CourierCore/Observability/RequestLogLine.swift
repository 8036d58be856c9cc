import Foundation
import HTTPTypes
import Logging

/// The one line Courier logs per call:
/// `GET https://api.example.com/users/42 → 200 (12 ms, 1.2 kB) [validateStatus ✓ → parse ✓]`.
struct RequestLogLine: CustomStringConvertible {
    let record: CallRecord
    let elapsed: Duration
    let redactor: Redactor
    let error: (any Error)?
    /// The request's URL, secrets redacted: redacted once for the line and its metadata.
    private let url: String?

    init(record: CallRecord, elapsed: Duration, redactor: Redactor, error: (any Error)?) {
        self.record = record
        self.elapsed = elapsed
        self.redactor = redactor
        self.error = error
        self.url = record.request.map { Redactor.displayURL(of: redactor.redact($0)) }
    }

    var description: String {
        var line: String
        if let request = record.request, let url {
            line = "\(request.method) \(url)"
        } else {
            line = "(unresolved request)"
        }
        var details = [Self.format(elapsed)]
        if let negotiated = record.negotiatedProtocol, negotiated != "http/1.1" { details.append(negotiated) }
        if let size = record.bodySize { details.append(Self.format(bytes: size)) }
        if record.attempt > 1 { details.append("\(record.attempt) attempts") }
        if let response = record.response {
            line += " → \(response.status.code)"
        } else if error != nil {
            line += " → no response"
        }
        line += " (\(details.joined(separator: ", ")))"
        let trace = record.trace.description
        if !trace.isEmpty { line += " [\(trace)]" }
        if let error {
            // A thrown CourierError's message was scrubbed of the call's secrets when the call failed.
            if let error = error as? CourierError {
                line += " failed: \(error.code)" + (error.message.map { ": \(redactor.redactInlinePairs($0))" } ?? "")
            } else {
                line += " failed: \(redactor.redactInlinePairs("\(error)"))"
            }
        }
        return line.oneLine
    }

    /// The line's facts as structured metadata, named after OpenTelemetry's HTTP attributes where one exists:
    /// `http.request.method`, `url.full` (redacted), `http.response.status_code`, `network.protocol.name`,
    /// `courier.duration_ms`, `courier.attempts`, `courier.decisions`, `error.type` (the ``CourierError/Code``);
    /// with `withHeaders` (a logger at `trace`), also `http.request.headers` and `http.response.headers`, secrets
    /// redacted.
    func metadata(withHeaders: Bool) -> Logger.Metadata {
        var metadata: Logger.Metadata = [:]
        if let request = record.request {
            metadata["http.request.method"] = .string(request.method.rawValue)
            if let url { metadata["url.full"] = .string(url) }
            if withHeaders {
                metadata["http.request.headers"] = .string(Self.format(redactor.redact(request.headerFields)))
            }
        }
        if let response = record.response {
            metadata["http.response.status_code"] = .stringConvertible(response.status.code)
            if withHeaders {
                metadata["http.response.headers"] = .string(Self.format(redactor.redact(response.headerFields)))
            }
        }
        if let negotiated = record.negotiatedProtocol { metadata["network.protocol.name"] = .string(negotiated) }
        metadata["courier.duration_ms"] = .stringConvertible(elapsed.wholeMilliseconds)
        metadata["courier.attempts"] = .stringConvertible(record.attempt)
        let trace = record.trace.description
        if !trace.isEmpty { metadata["courier.decisions"] = .string(trace) }
        if let error {
            metadata["error.type"] = .string((error as? CourierError)?.code.description ?? "\(type(of: error))")
        }
        return metadata
    }

    static func format(_ fields: HTTPFields) -> String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "; ").oneLine
    }

    static func format(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let milliseconds = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        if milliseconds < 10 { return String(format: "%.1f ms", milliseconds) }
        if milliseconds < 10_000 { return "\(Int(milliseconds.rounded())) ms" }
        return String(format: "%.1f s", milliseconds / 1000)
    }

    static func format(bytes: Int) -> String {
        switch bytes {
        case ..<1000: "\(bytes) B"
        case ..<1_000_000: String(format: "%.1f kB", Double(bytes) / 1000)
        case ..<1_000_000_000: String(format: "%.1f MB", Double(bytes) / 1_000_000)
        default: String(format: "%.1f GB", Double(bytes) / 1_000_000_000)
        }
    }
}
