import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Logging
import Testing

/// Shared helpers for the authentication suites: a controllable time, scripted refreshers, a token endpoint and
/// an API on a `MockTransport` that accepts only the current token.
enum AuthFixtures {
    typealias Shared = DecisionFixtures.Shared
    typealias Counter = DecisionFixtures.Counter

    static let tokenPath = "/oauth/token"
    static let start = Date(timeIntervalSince1970: 1_700_000_000)

    /// The first credential of most tests: `access-1` / `refresh-1`, valid for an hour.
    static func signedIn(expiresIn seconds: TimeInterval = 3600, at time: Date = start) -> Credential {
        Credential(accessToken: "access-1", refreshToken: "refresh-1", expiresAt: time.addingTimeInterval(seconds))
    }

    /// A settable "now".
    final class TestTime: Sendable {
        private let shared = Shared(AuthFixtures.start)

        var now: Date { shared.value }
        var closure: @Sendable () -> Date { { self.now } }

        func advance(by seconds: TimeInterval) { shared.update { $0 = $0.addingTimeInterval(seconds) } }
    }

    /// A refresher set after the client it sends through is built (so the refresh can go through the
    /// authenticated client itself, as it would in an app that shares one client).
    final class DeferredRefresher: TokenRefresher {
        private let target = Shared<(any TokenRefresher)?>(nil)

        func set(_ refresher: any TokenRefresher) { target.update { $0 = refresher } }

        func refresh(_ credential: Credential) async throws -> Credential {
            guard let refresher = target.value else { throw DecisionFixtures.Failure(reason: "no refresher set") }
            return try await refresher.refresh(credential)
        }

        func canRenew(_ credential: Credential) -> Bool { target.value?.canRenew(credential) ?? true }
    }

    /// A refresher that answers from a closure and counts its calls; it may wait on a gate first.
    final class ScriptedRefresher: TokenRefresher {
        let calls = Counter()
        private let gate: Gate?
        private let answer: @Sendable (Credential, Int) throws -> Credential

        init(
            gate: Gate? = nil,
            answer: @escaping @Sendable (Credential, Int) throws -> Credential = { old, call in
                Credential(accessToken: "access-\(call + 1)", refreshToken: "refresh-\(call + 1)")
            }
        ) {
            self.gate = gate
            self.answer = answer
        }

        func refresh(_ credential: Credential) async throws -> Credential {
            let call = calls.next()
            await gate?.pass()
            return try answer(credential, call)
        }
    }

    /// Suspends callers of ``pass()`` until ``open()``; counts arrivals.
    actor Gate {
        private var isOpen = false
        private var waiting: [CheckedContinuation<Void, Never>] = []
        private(set) var arrivals = 0
        private var arrivalWatchers: [(Int, CheckedContinuation<Void, Never>)] = []

        func pass() async {
            arrivals += 1
            let ready = arrivalWatchers.filter { $0.0 <= arrivals }
            arrivalWatchers.removeAll { $0.0 <= arrivals }
            for watcher in ready { watcher.1.resume() }
            guard !isOpen else { return }
            await withCheckedContinuation { waiting.append($0) }
        }

        func open() {
            isOpen = true
            for continuation in waiting { continuation.resume() }
            waiting.removeAll()
        }

        /// Returns once `count` callers have arrived.
        func waitForArrivals(_ count: Int) async {
            guard arrivals < count else { return }
            await withCheckedContinuation { arrivalWatchers.append((count, $0)) }
        }
    }

    /// Holds every arrival until `count` have arrived, then lets all through.
    actor Barrier {
        private let count: Int
        private var waiting: [CheckedContinuation<Void, Never>] = []

        init(count: Int) { self.count = count }

        func arrive() async {
            if waiting.count + 1 >= count {
                for continuation in waiting { continuation.resume() }
                waiting.removeAll()
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }
    }

    /// Everything a client-level test needs.
    struct Harness {
        let client: Client
        let mock: MockTransport
        let authenticator: Authenticator
        let time: TestTime
        let log: DecisionFixtures.LogCapture

        /// Requests to the token endpoint.
        var tokenRequests: [MockTransport.RecordedRequest] {
            mock.recordedRequests.filter { $0.pathWithoutQuery == AuthFixtures.tokenPath }
        }
        /// Requests to anything else.
        var apiRequests: [MockTransport.RecordedRequest] {
            mock.recordedRequests.filter { $0.pathWithoutQuery != AuthFixtures.tokenPath }
        }
    }

    /// A client on a mock transport, authenticated by an authenticator whose OAuth 2.0 refresher posts to
    /// ``tokenPath`` through that same client.
    static func harness(
        store: any CredentialStore = InMemoryCredentialStore(),
        signIn credential: Credential? = signedIn(),
        refreshWindow: Duration = .seconds(60),
        refreshLimit: Authenticator.RefreshLimit = .default,
        rejectedWhen: @escaping @Sendable (ReceivedResponse) -> Bool = { _ in false }
    ) async throws -> Harness {
        let time = TestTime()
        let log = DecisionFixtures.LogCapture()
        let deferred = DeferredRefresher()
        let authenticator = Authenticator(
            store: store,
            refresher: deferred,
            refreshWindow: refreshWindow,
            refreshLimit: refreshLimit,
            now: time.closure
        )
        let (client, mock) = Fixtures.client { configuration in
            configuration.logger = log.logger(level: .trace)
            configuration.authenticate(with: authenticator, rejectedWhen: rejectedWhen)
        }
        deferred.set(
            OAuth2RefreshTokenRefresher(client: client, path: tokenPath, clientID: "courier-tests", now: time.closure)
        )
        if let credential { try await authenticator.signIn(credential) }
        return Harness(client: client, mock: mock, authenticator: authenticator, time: time, log: log)
    }

    /// A token endpoint that issues `access-N` / `refresh-N` (N = 2, 3, …) valid for an hour, or answers
    /// `400 invalid_grant` while `revoked` is true.
    static func stubTokenEndpoint(_ mock: MockTransport, revoked: Shared<Bool>? = nil) {
        let issued = Counter()
        mock.stub(.post, tokenPath) { _ in
            if revoked?.value == true { return .json(raw: #"{"error":"invalid_grant"}"#, status: 400) }
            let number = issued.next() + 1
            return .json(
                raw: #"{"access_token":"access-\#(number)","token_type":"bearer","expires_in":3600,"#
                    + #""refresh_token":"refresh-\#(number)"}"#)
        }
    }

    /// A 401 as a resource server sends it for an expired token (RFC 6750 §3).
    static let invalidToken = MockResponse.status(
        401,
        headerFields: [.wwwAuthenticate: #"Bearer realm="api", error="invalid_token""#]
    )

    /// An API at `path` that answers 200 `ok` to `Bearer <accepted>` and ``invalidToken`` to anything else.
    static func stubAPI(
        _ mock: MockTransport,
        path: String = "/probe",
        accepting accepted: @escaping @Sendable () -> String,
        beforeRejecting: (@Sendable () async -> Void)? = nil
    ) {
        mock.stub(nil, path) { request in
            if request.head.headerFields[.authorization] == "Bearer \(accepted())" { return .text("ok") }
            await beforeRejecting?()
            return invalidToken
        }
    }

    /// Every secret the tests issue, to search outputs for.
    static let secrets = ["access-1", "access-2", "access-3", "refresh-1", "refresh-2", "refresh-3"]
}
