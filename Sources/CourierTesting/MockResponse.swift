import CourierCore
public import Foundation
public import HTTPTypes

/// A scripted response for ``MockTransport``: a status, header fields, a body, and optionally a fault.
///
/// ```swift
/// mock.stub(.get, "/users/42", with: .json(User(id: 42, name: "Ada")))
/// mock.stub(.get, "/flaky", with: [.status(503), .json(["ok": true])])
/// mock.stub(.get, "/broken", with: .text("partial body", fault: .resetMidBody(afterBytes: 4)))
/// ```
public struct MockResponse: Sendable {
    /// The status.
    public var status: HTTPResponse.Status
    /// The header fields.
    public var headerFields: HTTPFields
    /// The body, sent in these chunks.
    public var chunks: [Data]
    /// A pause before the head is returned.
    public var delay: Duration?
    /// A failure to inject.
    public var fault: MockFault?

    /// Creates a response.
    public init(
        status: HTTPResponse.Status = .ok,
        headerFields: HTTPFields = [:],
        body: Data = Data(),
        chunkSize: Int? = nil,
        delay: Duration? = nil,
        fault: MockFault? = nil
    ) {
        self.status = status
        self.headerFields = headerFields
        if let chunkSize, chunkSize > 0, body.count > chunkSize {
            // From the body's own start: a slice of another `Data` (`data.dropFirst(3)`) keeps its parent's indices.
            self.chunks = stride(from: body.startIndex, to: body.endIndex, by: chunkSize).map {
                body.subdata(in: $0..<min($0 + chunkSize, body.endIndex))
            }
        } else {
            self.chunks = body.isEmpty ? [] : [body]
        }
        self.delay = delay
        self.fault = fault
    }

    /// The whole body.
    public var body: Data { chunks.reduce(into: Data()) { $0.append($1) } }

    /// A response with only a status code (and an empty body).
    public static func status(_ code: Int, headerFields: HTTPFields = [:], fault: MockFault? = nil) -> MockResponse {
        MockResponse(status: HTTPResponse.Status(code: code), headerFields: headerFields, fault: fault)
    }

    /// A JSON response (`Content-Type: application/json`).
    ///
    /// An encoding failure yields a 500 whose body names the error, so a broken fixture fails the test loudly.
    public static func json(
        _ value: some Encodable,
        status: Int = 200,
        headerFields: HTTPFields = [:],
        fault: MockFault? = nil
    ) -> MockResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var fields = headerFields
        fields[.contentType] = fields[.contentType] ?? "application/json"
        do {
            return MockResponse(
                status: HTTPResponse.Status(code: status),
                headerFields: fields,
                body: try encoder.encode(value),
                fault: fault
            )
        } catch {
            return .text("MockResponse.json could not encode the fixture: \(error)", status: 500)
        }
    }

    /// A JSON response from raw JSON text.
    public static func json(
        raw text: String,
        status: Int = 200,
        headerFields: HTTPFields = [:],
        fault: MockFault? = nil
    ) -> MockResponse {
        var fields = headerFields
        fields[.contentType] = fields[.contentType] ?? "application/json"
        return MockResponse(
            status: HTTPResponse.Status(code: status), headerFields: fields, body: Data(text.utf8), fault: fault)
    }

    /// A text response (`Content-Type: text/plain; charset=utf-8`).
    public static func text(
        _ text: String,
        status: Int = 200,
        headerFields: HTTPFields = [:],
        fault: MockFault? = nil
    ) -> MockResponse {
        var fields = headerFields
        fields[.contentType] = fields[.contentType] ?? "text/plain; charset=utf-8"
        return MockResponse(
            status: HTTPResponse.Status(code: status), headerFields: fields, body: Data(text.utf8), fault: fault)
    }

    /// A response with raw bytes.
    public static func data(_ data: Data, status: Int = 200, headerFields: HTTPFields = [:]) -> MockResponse {
        MockResponse(status: HTTPResponse.Status(code: status), headerFields: headerFields, body: data)
    }
}

/// A failure ``MockTransport`` injects, modelled on OkHttp's MockWebServer socket policies.
public enum MockFault: Sendable {
    /// Throw `error` before any response arrives (a refused connection, a DNS failure).
    ///
    /// Pass a `CourierError` with the code the real transports report, so the retry policy and
    /// `ErrorMessageProvider` see what they will see in production:
    /// `.failBeforeResponse(CourierError(code: .connectionRefused, stage: .transport, isKnownUnsent: true))` (a
    /// failed connection attempt is known to have sent nothing, so the retry policy retries it whatever the method).
    /// Any other error (a `URLError`, say) reaches the pipeline as it is and ends the call as `transportFailed`,
    /// which is not retried.
    case failBeforeResponse(any Error)
    /// Return the head, then end the body with a connection reset after `afterBytes` bytes. Ignored for a response
    /// without a body (to a HEAD, a 204 or 304, or `Content-Length: 0`), which ends with its head.
    case resetMidBody(afterBytes: Int)
    /// Never answer: suspend until the calling task is cancelled.
    case stall
    /// Return the head, then never finish the body: suspend until cancelled. Ignored for a response without a body
    /// (to a HEAD, a 204 or 304, or `Content-Length: 0`), which ends with its head.
    case stallBody(afterBytes: Int)
}
