import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Logging
import Testing

/// The one swift-log line Courier writes per call.
@Suite("RequestLogLine", .timeLimit(.minutes(1)))
struct RequestLogLineTests {
    /// `(12 ms, …` or `(1.5 ms, …`: the elapsed time as the log line formats it.
    private static let elapsed = #"(\d+(\.\d)? ms|\d+\.\d s)"#

    private static func matches(_ line: String, _ pattern: String) throws -> Bool {
        try Regex(pattern).wholeMatch(in: line) != nil
    }

    @Test("a successful call logs exactly one debug line with method, URL, status, time, size and trace")
    func successLine() async throws {
        let capture = DecisionFixtures.LogCapture()
        let (client, mock) = Fixtures.client { $0.logger = capture.logger(level: .debug) }
        mock.stub(.post, "/post", with: .json(raw: #"{"form":{"foo":"bar"}}"#))
        _ = try await client.send(HTTPBinPost(foo: "bar"))
        let entry = try #require(capture.entries.onlyElement)
        #expect(entry.level == .debug)
        #expect(
            try Self.matches(
                entry.message,
                #"POST https://api\.example\.com/post → 200 \("# + Self.elapsed
                    + #", 22 B\) \[validateStatus ✓ → parse ✓\]"#
            ),
            "\(entry.message)"
        )
    }

    @Test("a failed call logs one debug line (never a warning by default) ending in 'failed: <code>: <message>'")
    func failureLine() async throws {
        let capture = DecisionFixtures.LogCapture()
        let (client, mock) = Fixtures.client { $0.logger = capture.logger(level: .debug) }
        mock.stub(.get, "/probe", with: MockResponse(status: .notFound, body: Data("nope".utf8)))
        _ = await expectCourierError { try await client.send(Probe()) }
        let entry = try #require(capture.entries.onlyElement)
        #expect(entry.level == .debug)
        #expect(
            try Self.matches(
                entry.message,
                #"GET https://api\.example\.com/probe → 404 \("# + Self.elapsed
                    + #", 4 B\) \[validateStatus ✗\] failed: unacceptableStatus: the server answered 404 Not Found"#
            ),
            "\(entry.message)"
        )
    }

    @Test("a retried call is still one line, with the attempts and the whole trace")
    func retriedCallLine() async throws {
        let capture = DecisionFixtures.LogCapture()
        let (client, mock) = Fixtures.client { $0.logger = capture.logger() }
        mock.stub(.get, "/probe", with: [.status(503), .status(503), .text("ok")])
        _ = try await client.send(DecisionFixtures.textProbe(decisions: [.retry(2), .validateStatus()]))
        let line = try #require(capture.messages.onlyElement)
        #expect(
            try Self.matches(
                line,
                #"GET https://api\.example\.com/probe → 200 \("# + Self.elapsed
                    + #", 2 B, 3 attempts\) \[retry ↻ restart → retry ↻ restart → validateStatus ✓ → parse ✓\]"#
            ),
            "\(line)"
        )
    }

    @Test("a call that got no response says so")
    func noResponseLine() async throws {
        let capture = DecisionFixtures.LogCapture()
        let (client, mock) = Fixtures.client { $0.logger = capture.logger() }
        let cause = CourierError(code: .connectionFailed, stage: .transport, message: "connection refused")
        mock.stub(.get, "/probe", with: .status(200, fault: .failBeforeResponse(cause)))
        _ = await expectCourierError { try await client.send(Probe()) }
        let line = try #require(capture.messages.onlyElement)
        #expect(line.hasPrefix("GET https://api.example.com/probe → no response ("))
        #expect(line.hasSuffix("failed: connectionFailed: connection refused"))
    }

    @Test("sizes above 1000 bytes are shown in kB")
    func kilobytes() async throws {
        let capture = DecisionFixtures.LogCapture()
        let (client, mock) = Fixtures.client { $0.logger = capture.logger() }
        mock.stub(.get, "/probe", with: .text(String(repeating: "x", count: 1200)))
        _ = try await client.send(Probe())
        #expect(capture.messages.onlyElement?.contains(" ms, 1.2 kB) [validateStatus ✓ → parse ✓]") == true)
    }

    @Test("levels: an info logger hears nothing by default; callLogLevel and failureLogLevel raise the lines")
    func levels() async throws {
        let info = DecisionFixtures.LogCapture()
        let (silent, silentMock) = Fixtures.client { $0.logger = info.logger(level: .info) }
        silentMock.stub(.get, "/probe", with: [.text("ok"), .status(500)])
        _ = try await silent.send(Probe())
        _ = await expectCourierError { try await silent.send(Probe()) }
        #expect(info.entries.isEmpty, "a library logs at debug unless asked")

        let warnings = DecisionFixtures.LogCapture()
        let (client, mock) = Fixtures.client {
            $0.logger = warnings.logger(level: .warning)
            $0.callLogLevel = .info
            $0.failureLogLevel = .warning
        }
        mock.stub(.get, "/probe", with: [.text("ok"), .status(500)])
        _ = try await client.send(Probe())
        _ = await expectCourierError { try await client.send(Probe()) }
        #expect(warnings.entries.map(\.level) == [.warning])

        let errors = DecisionFixtures.LogCapture()
        let quiet = client.configured { $0.logger = errors.logger(level: .error) }
        mock.stub(.get, "/probe", with: [.text("ok"), .status(500)])
        _ = try await quiet.send(Probe())
        _ = await expectCourierError { try await quiet.send(Probe()) }
        #expect(errors.entries.isEmpty)
    }

    @Test("concurrent calls log one line each")
    func oneLinePerConcurrentCall() async throws {
        let capture = DecisionFixtures.LogCapture()
        let (client, mock) = Fixtures.client { $0.logger = capture.logger() }
        mock.stub(.get, "/probe") { _ in .text("ok") }
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { try await client.send(Probe()) } }
            for try await value in group { #expect(value == "ok") }
        }
        #expect(capture.messages.count == 20)
        #expect(capture.messages.allSatisfy { $0.hasPrefix("GET https://api.example.com/probe → 200 (") })
    }

    @Test("a call that fails before any decision ran has no empty trace brackets in its line")
    func noEmptyTraceBrackets() async throws {
        let capture = DecisionFixtures.LogCapture()
        let (client, _) = Fixtures.client { $0.logger = capture.logger() }
        var probe = Probe()
        probe.extraAdapters = [.custom("explode") { _, _ in throw DecisionFixtures.Failure(reason: "boom") }]
        _ = await expectCourierError { try await client.send(probe) }
        let line = try #require(capture.messages.onlyElement)
        #expect(line.hasPrefix("GET https://api.example.com/probe → no response ("))
        #expect(!line.contains(" []"))
    }

    @Test("the line's facts are structured metadata: method, redacted URL, status, duration, attempts, decisions")
    func structuredMetadata() async throws {
        let capture = DecisionFixtures.LogCapture()
        let (client, mock) = Fixtures.client { $0.logger = capture.logger(level: .debug) }
        mock.stub(.get, "/probe", with: [.status(503), .text("ok")])
        var probe = DecisionFixtures.textProbe(decisions: [.retry(1), .validateStatus()])
        probe.query = ["api_key": "s3cret-key", "page": 2]
        _ = try await client.send(probe)
        let entry = try #require(capture.entries.onlyElement)
        for expected in [
            #""http.request.method": GET"#, #""http.response.status_code": 200"#, #""courier.attempts": 2"#,
            #""courier.decisions": retry ↻ restart → validateStatus ✓ → parse ✓"#, #""courier.duration_ms": "#,
        ] {
            #expect(entry.metadata.contains(expected), "\(expected) in \(entry.metadata)")
        }
        #expect(entry.metadata.contains(#""url.full": https://api.example.com/probe?"#))
        #expect(entry.metadata.contains("page=2"))
        #expect(!entry.metadata.contains("s3cret-key"))
        #expect(!entry.metadata.contains("http.request.headers"), "headers only at trace")

        let failures = DecisionFixtures.LogCapture()
        let failing = client.configured { $0.logger = failures.logger(level: .debug) }
        mock.stub(.get, "/probe", with: .status(404))
        _ = await expectCourierError { try await failing.send(Probe()) }
        #expect(try #require(failures.entries.onlyElement).metadata.contains(#""error.type": unacceptableStatus"#))
    }

    @Test("at trace level the one line also carries the request and response headers, secrets redacted")
    func traceLevelAddsRedactedHeaders() async throws {
        let capture = DecisionFixtures.LogCapture()
        let (client, mock) = Fixtures.client { $0.logger = capture.logger(level: .trace) }
        mock.stub(
            .get, "/probe", with: .text("ok", headerFields: [.setCookie: "session=s3cr3t-cookie", .server: "mock"]))
        var probe = Probe()
        probe.headers = ["Authorization": "Bearer t0ken-value", "X-Trace": "visible"]
        _ = try await client.send(probe)

        let entry = try #require(capture.entries.onlyElement)
        #expect(entry.level == .debug)
        #expect(entry.metadata.contains("Authorization: <redacted>"), "\(entry.metadata)")
        #expect(entry.metadata.contains("X-Trace: visible"))
        #expect(entry.metadata.contains("Set-Cookie: <redacted>"))
        #expect(entry.metadata.contains("Server: mock"))
        #expect(!entry.metadata.contains("t0ken-value"))
        #expect(!entry.metadata.contains("s3cr3t-cookie"))

        let debugCapture = DecisionFixtures.LogCapture()
        let debug = client.configured { $0.logger = debugCapture.logger(level: .debug) }
        mock.stub(.get, "/probe", with: .text("ok"))
        _ = try await debug.send(Probe())
        #expect(!(try #require(debugCapture.entries.onlyElement).metadata.contains("X-Trace")))
    }
}
