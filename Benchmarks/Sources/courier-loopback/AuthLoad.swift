import Courier
import CourierAsyncHTTPClient
import CourierTestServer
import Foundation
import HTTPTypes
import NIOConcurrencyHelpers

/// The token server's side of the auth-under-load test: the one access token `/protected` accepts, and how many
/// times `/oauth/token` rotated it.
final class TokenAuthority: Sendable {
    private struct State {
        var generation = 0
        var refreshes = 0
        var rejections = 0
    }

    private let state = NIOLockedValueBox(State())

    /// The access token `/protected` currently accepts.
    var currentToken: String { state.withLockedValue { "token-\($0.generation)" } }

    /// How many token requests `/oauth/token` answered, and how many 401s `/protected` sent.
    var counts: (refreshes: Int, rejections: Int) { state.withLockedValue { ($0.refreshes, $0.rejections) } }

    /// Clears the counters (between rounds); the current token stays.
    func resetCounts() {
        state.withLockedValue {
            $0.refreshes = 0
            $0.rejections = 0
        }
    }

    /// Adds `/protected` (the tiny JSON body for the current token, a 401 with a Bearer challenge for any other)
    /// and `/oauth/token` (rotates the token, counts the call) to `server`.
    func register(on server: TestServer) {
        server.register("GET", "/protected") { [self] request in
            let expected = "Bearer \(currentToken)"
            guard request.header("Authorization") == expected else {
                state.withLockedValue { $0.rejections += 1 }
                return TestServerResponse(
                    status: 401,
                    headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)],
                    body: []
                )
            }
            return .json(TinyPayload.json)
        }
        server.register("POST", "/oauth/token") { [self] request in
            let body = String(decoding: request.body, as: UTF8.self)
            guard body.contains("grant_type=refresh_token") else {
                return .json(#"{"error":"unsupported_grant_type"}"#, status: 400)
            }
            let generation = state.withLockedValue {
                $0.refreshes += 1
                $0.generation += 1
                return $0.generation
            }
            return .json(
                #"{"access_token":"token-\#(generation)","token_type":"Bearer","expires_in":3600,"#
                    + #""refresh_token":"refresh-\#(generation)"}"#)
        }
    }
}

/// `GET /protected`, which must carry the current bearer token.
struct ProtectedRequest: Request {
    typealias Response = Data
    var path: String { "/protected" }
    var authentication: AuthenticationRequirement { .required }
}

/// One round of the auth-under-load test: the same load, once with a stale token and once with the valid one.
struct AuthLoadRound: Sendable {
    /// Requests sent in each phase.
    let requests: Int
    /// Wall time of the phase in which every request was first rejected.
    let staleSeconds: Double
    /// Calls to `/oauth/token` during that phase (must be 1).
    let refreshes: Int
    /// 401s the server sent during that phase (at least one; up to one per request).
    let rejections: Int
    /// Requests that failed in that phase (must be 0).
    let staleErrors: Int
    /// Wall time of the phase with a valid token from the start.
    let validSeconds: Double
    /// Requests that failed in that phase (must be 0).
    let validErrors: Int
    /// The first error of either phase, to print.
    let firstError: String?
}

/// Runs the auth-under-load test: per round, `count` concurrent requests through a client whose credential the
/// server no longer accepts (every request gets a 401, one refresh renews the token, every request is replayed
/// once), then `count` concurrent requests through a client signed in with the valid token.
///
/// Each phase gets a new client and `Authenticator` on the process-wide AsyncHTTPClient pool of
/// `options.connections` connections (warmed up first, so no phase pays for connecting). The refresher goes through
/// the same transport as the requests, as in the README; its token request travels in the priority lane (its own
/// connection), and the client's `maxConcurrentRequests` equals the pool size (`--auth-limit` changes it), so calls
/// that wait for a connection are signed after the refresh instead of before it (issue #17's auth-under-load row).
///
/// - Returns: One result per round.
func runAuthLoad(_ options: Options, host: ServerHost, authority: TokenAuthority) async -> [AuthLoadRound] {
    let count = options.authLoad ?? 0
    _ = await authPhase(
        count: options.connections, token: authority.currentToken, baseURL: host.baseURL,
        connections: options.connections, limit: options.authLimit)
    var rounds: [AuthLoadRound] = []
    for _ in 0..<options.rounds {
        authority.resetCounts()
        let stale = await authPhase(
            count: count, token: "revoked", baseURL: host.baseURL, connections: options.connections,
            limit: options.authLimit)
        let (refreshes, rejections) = authority.counts
        let valid = await authPhase(
            count: count, token: authority.currentToken, baseURL: host.baseURL, connections: options.connections,
            limit: options.authLimit)
        rounds.append(
            AuthLoadRound(
                requests: count, staleSeconds: stale.seconds, refreshes: refreshes, rejections: rejections,
                staleErrors: stale.errors, validSeconds: valid.seconds, validErrors: valid.errors,
                firstError: stale.firstError ?? valid.firstError
            ))
    }
    return rounds
}

/// Signs a new client in with `token` and sends `count` protected requests at once.
private func authPhase(
    count: Int,
    token: String,
    baseURL: URL,
    connections: Int,
    limit: Int?
) async -> (seconds: Double, errors: Int, firstError: String?) {
    let transport = AsyncHTTPClientTransport(configuration: .init(maxConnectionsPerHost: connections))
    let base = Client(server: Server(baseURL: baseURL), transport: transport)
    let authenticator = Authenticator(
        refresher: OAuth2RefreshTokenRefresher(client: base, path: "/oauth/token", clientID: "courier-loopback")
    )
    let client = base.configured {
        $0.authenticate(with: authenticator)
        $0.maxConcurrentRequests = limit == 0 ? nil : (limit ?? connections)
    }
    do {
        _ = try await authenticator.signIn(Credential(accessToken: token, refreshToken: "refresh-0"))
    } catch {
        return (.nan, count, "sign-in failed: \(error)")
    }
    let start = ContinuousClock.now
    let (errors, firstError) = await withTaskGroup(of: String?.self) { group in
        for _ in 0..<count {
            group.addTask {
                do {
                    _ = try await client.send(ProtectedRequest())
                    return nil
                } catch {
                    return "\(error)"
                }
            }
        }
        var errors = 0
        var firstError: String?
        for await failure in group {
            if let failure {
                errors += 1
                firstError = firstError ?? failure
            }
        }
        return (errors, firstError)
    }
    return (start.duration(to: .now).seconds, errors, firstError)
}
