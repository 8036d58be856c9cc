import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

private struct SilentError: Error, UserPresentableError {
    var userMessage: String? { nil }
}

@Suite("ErrorMessageProvider", .timeLimit(.minutes(1)))
struct ErrorMessageProviderTests {
    private static func statusError(_ code: Int, underlying: (any Error)? = nil) -> CourierError {
        CourierError(
            code: .unacceptableStatus,
            stage: .decide,
            response: HTTPResponse(status: .init(code: code)),
            underlyingError: underlying
        )
    }

    @Test("a UserPresentableError's own message wins, directly or as underlyingError")
    func userPresentableWins() {
        let provider = ErrorMessageProvider()
        let apiError = APIError(code: 403, reason: "Invalid Token.")
        #expect(provider.message(for: apiError) == "Invalid Token.")
        #expect(provider.message(for: Self.statusError(403, underlying: apiError)) == "Invalid Token.")
    }

    @Test("a UserPresentableError without a message falls back to the status sentence")
    func silentUserPresentableFallsBack() {
        let provider = ErrorMessageProvider()
        #expect(
            provider.message(for: Self.statusError(404, underlying: SilentError()))
                == "We couldn't find what you were looking for.")
    }

    @Test(
        "each status class gets its own sentence",
        arguments: [
            (401, "Your session has expired, so please sign in again."),
            (403, "You don't have permission to do that."),
            (404, "We couldn't find what you were looking for."),
            (429, "You're doing that too often, so please wait a moment and try again."),
            (500, "The server had a problem, so please try again later."),
            (503, "The service is temporarily unavailable, so please try again later."),
            (400, "The request couldn't be completed."),
            (422, "The request couldn't be completed."),
            (502, "The service is temporarily unavailable, so please try again later."),
        ]
    )
    func statusSentences(code: Int, sentence: String) {
        #expect(ErrorMessageProvider().message(for: Self.statusError(code)) == sentence)
    }

    @Test(
        "a server that can't be reached is not called offline",
        arguments: [
            CourierError.Code.connectionFailed, .transportFailed, .connectTimeout, .connectionRefused, .hostNotFound,
            .networkUnreachable,
        ])
    func connectionFailure(code: CourierError.Code) {
        let error = CourierError(code: code, stage: .transport)
        #expect(
            ErrorMessageProvider().message(for: error)
                == "The server isn't answering right now, so please try again later."
        )
    }

    @Test("offline only when the system says so; TLS failures have their own sentence")
    func offlineAndTLS() {
        let provider = ErrorMessageProvider()
        #expect(
            provider.message(for: CourierError(code: .notConnectedToInternet, stage: .transport))
                == "You appear to be offline, so please check your internet connection and try again.")
        #expect(
            provider.message(for: CourierError(code: .untrustedCertificate, stage: .transport))
                == "A secure connection to the server couldn't be made.")
        #expect(
            CourierError(code: .pinMismatch, stage: .transport).localizedDescription
                == "A secure connection to the server couldn't be made.")
    }

    @Test("cancellation, unknown errors and other codes get their sentences")
    func otherSentences() {
        let provider = ErrorMessageProvider()
        #expect(provider.message(for: CancellationError()) == "The request was cancelled.")
        #expect(
            provider.message(for: DecisionFixtures.Failure(reason: "x")) == "Something went wrong, so please try again."
        )
        #expect(
            provider.message(for: CourierError(code: .timedOut, stage: .transport))
                == "The server is taking too long to respond, so please try again."
        )
        #expect(
            provider.message(for: CourierError(code: .decodingFailed, stage: .parse))
                == "The server sent a response we couldn't understand."
        )
    }

    @Test(
        "a custom localize closure receives the documented key and the English sentence, and its result is used",
        arguments: [
            (403, "courier.error.forbidden", "You don't have permission to do that."),
            (401, "courier.error.sessionExpired", "Your session has expired, so please sign in again."),
            (
                503, "courier.error.serverUnavailable",
                "The service is temporarily unavailable, so please try again later."
            ),
        ]
    )
    func localizeStatus(code: Int, key: String, english: String) {
        let calls = DecisionFixtures.Journal()
        let provider = ErrorMessageProvider { key, english in
            calls.record("\(key)|\(english)")
            return "translated:\(key)"
        }
        #expect(provider.message(for: Self.statusError(code)) == "translated:\(key)")
        #expect(calls.entries == ["\(key)|\(english)"])
    }

    @Test("the localize keys for codes, cancellation and unknown errors")
    func localizeKeys() {
        let keys = DecisionFixtures.Journal()
        let provider = ErrorMessageProvider { key, _ in
            keys.record(key)
            return key.uppercased()
        }
        #expect(
            provider.message(for: CourierError(code: .notConnectedToInternet, stage: .transport))
                == "COURIER.ERROR.OFFLINE")
        #expect(provider.message(for: CancellationError()) == "COURIER.ERROR.CANCELLED")
        #expect(provider.message(for: DecisionFixtures.Failure(reason: "x")) == "COURIER.ERROR.UNKNOWN")
        #expect(provider.message(for: CourierError(code: .timedOut, stage: .transport)) == "COURIER.ERROR.TIMEDOUT")
        #expect(
            keys.entries == [
                "courier.error.offline", "courier.error.cancelled", "courier.error.unknown",
                "courier.error.timedOut",
            ]
        )
    }

    @Test("a server's own message is shown as is, not passed through localize")
    func serverMessageNotLocalized() {
        let calls = DecisionFixtures.Counter()
        let provider = ErrorMessageProvider { _, english in
            calls.next()
            return english
        }
        #expect(
            provider.message(for: Self.statusError(403, underlying: APIError(code: 403, reason: "Nope."))) == "Nope.")
        #expect(calls.count == 0)
    }

    @Test("end to end: the seeds' 403 shows the server's reason, a bare 404 the generic sentence")
    func endToEnd() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/token", with: .json(raw: #"{"code":403,"reason":"Invalid Token."}"#, status: 403))
        mock.stub(.get, "/missing", with: .status(404))
        let provider = ErrorMessageProvider()
        let forbidden = try #require(
            await expectCourierError {
                try await client.send(
                    DecisionFixtures.textProbe(path: "/token", decisions: [.validateStatus(decoding: APIError.self)]))
            }
        )
        #expect(provider.message(for: forbidden) == "Invalid Token.")
        let missing = try #require(await expectCourierError { try await client.send(Probe(path: "/missing")) })
        #expect(provider.message(for: missing) == "We couldn't find what you were looking for.")
    }
}
