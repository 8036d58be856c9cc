import Courier
import Foundation
import HTTPTypes
import Testing

@Suite("ErrorMessageProvider: the catalogue", .timeLimit(.minutes(1)))
struct ErrorCatalogueTests {
    /// One sentence for an end user: capitalised, one full stop at the end and none inside, no jargon.
    private static func checkIsPlainSentence(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(text.first?.isUppercase == true, "\(text)", sourceLocation: sourceLocation)
        #expect(text.hasSuffix("."), "\(text)", sourceLocation: sourceLocation)
        #expect(
            text.dropLast().allSatisfy { !".!?".contains($0) }, "more than one sentence: \(text)",
            sourceLocation: sourceLocation)
        let lowered = text.lowercased()
        for jargon in ["http", "nil", "null", "error", "status", "courier", "{", "}", "_"] {
            #expect(!lowered.contains(jargon), "jargon '\(jargon)' in: \(text)", sourceLocation: sourceLocation)
        }
        let hasNumber = text.contains { $0.isNumber }
        #expect(!hasNumber, "a number in: \(text)", sourceLocation: sourceLocation)
    }

    @Test("every CourierError code maps to one plain sentence, at every stage")
    func everyCode() {
        let provider = ErrorMessageProvider()
        #expect(CourierError.Code.allCodes.count >= 27)
        #expect(Set(CourierError.Code.allCodes).count == CourierError.Code.allCodes.count)
        for code in CourierError.Code.allCodes {
            for stage in [CourierError.Stage.adapt, .transport, .decide, .parse] {
                Self.checkIsPlainSentence(provider.message(for: CourierError(code: code, stage: stage)))
            }
        }
    }

    @Test("every status from 400 to 599 maps to one plain sentence")
    func everyStatus() {
        let provider = ErrorMessageProvider()
        for status in 400..<600 {
            let error = CourierError(
                code: .unacceptableStatus, stage: .decide, response: HTTPResponse(status: .init(code: status)))
            Self.checkIsPlainSentence(provider.message(for: error))
        }
    }

    @Test("every kind has its own plain English sentence")
    func everyKind() {
        let kinds = ErrorMessageProvider.Kind.allKinds
        #expect(kinds.count == 19)
        #expect(Set(kinds.map(\.english)).count == kinds.count)
        for kind in kinds { Self.checkIsPlainSentence(kind.english) }
    }

    @Test(
        "the issue's catalogue: each case gets its kind",
        arguments: [
            (CourierError(code: .notConnectedToInternet, stage: .transport), ErrorMessageProvider.Kind.offline),
            (CourierError(code: .connectionFailed, stage: .transport), .serverUnreachable),
            (CourierError(code: .connectionRefused, stage: .transport), .serverUnreachable),
            (CourierError(code: .connectTimeout, stage: .transport), .serverUnreachable),
            (CourierError(code: .hostNotFound, stage: .transport), .serverUnreachable),
            (CourierError(code: .networkUnreachable, stage: .transport), .serverUnreachable),
            (CourierError(code: .idleTimeout, stage: .transport), .timedOut),
            (CourierError(code: .connectionReset, stage: .transport), .connectionLost),
            (CourierError(code: .truncatedResponse, stage: .transport), .connectionLost),
            (CourierError(code: .untrustedCertificate, stage: .transport), .secureConnectionFailed),
            (CourierError(code: .hostnameMismatch, stage: .transport), .secureConnectionFailed),
            (CourierError(code: .certificateExpired, stage: .transport), .secureConnectionFailed),
            (CourierError(code: .pinMismatch, stage: .transport), .secureConnectionFailed),
            (CourierError(code: .tlsHandshakeFailed, stage: .transport), .secureConnectionFailed),
            (CourierError(code: .clientCertificateRejected, stage: .transport), .secureConnectionFailed),
            (CourierError(code: .timedOut, stage: .transport), .timedOut),
            (Self.status(503), .serverUnavailable),
            (CourierError(code: .reauthenticationRequired, stage: .decide), .sessionExpired),
            (Self.status(401), .sessionExpired),
            (Self.status(403), .forbidden),
            (Self.status(404), .notFound),
            (Self.status(429), .rateLimited),
            (CourierError(code: .malformedResponse, stage: .transport), .invalidResponse),
            (CourierError(code: .decodingFailed, stage: .parse), .invalidResponse),
            (CourierError(code: .bodyTooLarge, stage: .transport), .responseTooLarge),
            (Self.status(413), .uploadTooLarge),
            (CourierError(code: .insecureRedirect, stage: .decide), .insecureConnection),
            // The session goes on: "sign in again" would be false, and trying later does not fix proxy credentials.
            (CourierError(code: .credentialStoreFailed, stage: .adapt), .unknown),
            (CourierError(code: .excessiveRefresh, stage: .adapt), .unknown),
            (CourierError(code: .fileWriteFailed, stage: .parse), .unknown),
            (CourierError(code: .proxyAuthenticationRequired, stage: .transport), .requestFailed),
            (CourierError(code: .missingCredential, stage: .adapt), .sessionExpired),
        ])
    func catalogue(error: CourierError, kind: ErrorMessageProvider.Kind) {
        #expect(ErrorMessageProvider.kind(for: error) == kind)
        #expect(ErrorMessageProvider().message(for: error) == kind.english)
    }

    @Test("cancellation and unknown errors have their kinds")
    func cancelledAndUnknown() {
        #expect(ErrorMessageProvider.kind(for: CancellationError()) == .cancelled)
        #expect(ErrorMessageProvider.kind(for: DecisionFixtures.Failure(reason: "x")) == .unknown)
        #expect(ErrorMessageProvider().message(for: CancellationError()) == "The request was cancelled.")
    }

    @Test(
        "server unavailable and rate limited say how long to wait when the server said (seconds or a date)",
        arguments: [
            (503, "120", "The service is temporarily unavailable, so please try again in 2 minutes."),
            (503, "30", "The service is temporarily unavailable, so please try again in 30 seconds."),
            (503, "90", "The service is temporarily unavailable, so please try again in 2 minutes."),
            (
                503, "Sun, 06 Nov 1994 09:49:37 GMT",
                "The service is temporarily unavailable, so please try again in 1 hour."
            ),
            (429, "5", "You're doing that too often, so please wait 5 seconds and try again."),
            (503, "garbage", "The service is temporarily unavailable, so please try again later."),
            (503, "0", "The service is temporarily unavailable, so please try again later."),
        ])
    func retryAfter(status: Int, value: String, sentence: String) {
        var head = HTTPResponse(status: .init(code: status))
        head.headerFields[.retryAfter] = value
        head.headerFields[.date] = "Sun, 06 Nov 1994 08:49:37 GMT"
        let error = CourierError(code: .unacceptableStatus, stage: .decide, response: head)
        #expect(ErrorMessageProvider().message(for: error) == sentence)
    }

    @Test("the wait sentence has its own key, with {wait} filled in after localizing")
    func waitKey() {
        let keys = DecisionFixtures.Journal()
        let provider = ErrorMessageProvider(locale: Locale(identifier: "en_US")) { key, english in
            keys.record(key)
            return key == "courier.error.serverUnavailable.wait" ? "Réessayez dans {wait}." : english
        }
        var head = HTTPResponse(status: .serviceUnavailable)
        head.headerFields[.retryAfter] = "60"
        #expect(
            provider.message(for: CourierError(code: .unacceptableStatus, stage: .decide, response: head))
                == "Réessayez dans 1 minute.")
        #expect(keys.entries == ["courier.error.serverUnavailable.wait"])
    }

    @Test("overrides win: a code override over a kind override over the catalogue; the server's own message over all")
    func overrides() {
        let provider = ErrorMessageProvider()
            .overriding(.notFound, with: "That item is gone.")
            .overriding(.offline, with: "No network.")
            .overriding(.connectTimeout, with: "The server is not answering.")
        #expect(provider.message(for: Self.status(404)) == "That item is gone.")
        #expect(provider.message(for: Self.status(410)) == "That item is gone.")
        #expect(provider.message(for: CourierError(code: .notConnectedToInternet, stage: .transport)) == "No network.")
        #expect(
            provider.message(for: CourierError(code: .connectTimeout, stage: .transport))
                == "The server is not answering.")
        #expect(provider.message(for: Self.status(403)) == ErrorMessageProvider.Kind.forbidden.english)
        let apiError = CourierError(
            code: .unacceptableStatus, stage: .decide, response: HTTPResponse(status: .notFound),
            underlyingError: APIError(code: 404, reason: "No such order."))
        #expect(provider.message(for: apiError) == "No such order.")
    }

    @Test("an override for a kind with a wait can use {wait}")
    func overrideWithWait() {
        let provider = ErrorMessageProvider().overriding(.rateLimited, with: "Slow down for {wait}.")
        var head = HTTPResponse(status: .tooManyRequests)
        head.headerFields[.retryAfter] = "10"
        #expect(
            provider.message(for: CourierError(code: .unacceptableStatus, stage: .decide, response: head))
                == "Slow down for 10 seconds.")
        #expect(provider.message(for: Self.status(429)) == "Slow down for a moment.")
    }

    @Test(
        "a 401 is sessionExpired only when the request carried a credential (a sign-in with a wrong password is not)",
        arguments: [
            ([:], "/sessions", ErrorMessageProvider.Kind.requestFailed),
            (["Content-Type": "application/json"], "/sessions", .requestFailed),
            (["Authorization": "<redacted>"], "/me", .sessionExpired),
            (["Cookie": "<redacted>"], "/me", .sessionExpired),
            // A session header the client's redactor hides, and an OAuth access token in the query.
            (["X-Session": "<redacted>"], "/me", .sessionExpired),
            (["X-Auth-Token": "<redacted>"], "/me", .sessionExpired),
            ([:], "/me?access_token=<redacted>", .sessionExpired),
            // An app's API key or a CSRF token, which a sign-in request carries too, is no session.
            (["X-Api-Key": "<redacted>", "X-XSRF-Token": "<redacted>"], "/sessions", .requestFailed),
            ([:], "/sessions?api_key=<redacted>", .requestFailed),
        ] as [([String: String], String, ErrorMessageProvider.Kind)])
    func unauthorizedWithoutCredential(headers: [String: String], path: String, kind: ErrorMessageProvider.Kind) {
        var fields = HTTPFields()
        for (name, value) in headers { fields[HTTPField.Name(name)!] = value }
        let request = HTTPRequest(
            method: .post, scheme: "https", authority: "api.example.com", path: path, headerFields: fields)
        let error = CourierError(
            code: .unacceptableStatus, stage: .decide, request: request, response: HTTPResponse(status: .unauthorized))
        #expect(ErrorMessageProvider.kind(for: error) == kind)
        #expect(ErrorMessageProvider().message(for: error) == kind.english)
    }

    private static func status(_ code: Int) -> CourierError {
        CourierError(code: .unacceptableStatus, stage: .decide, response: HTTPResponse(status: .init(code: code)))
    }
}
