#if TestServer
    public import Foundation

    /// An OAuth 2.0 token endpoint with rotating refresh tokens and reuse detection (RFC 9700 §4.14.2), and a
    /// protected resource, installed on a ``TestServer``: what the fleet tests run many clients against.
    ///
    /// - `POST <tokenPath>` with `grant_type=refresh_token&refresh_token=…`: a current refresh token is spent and
    ///   answered with a new access token and a new refresh token of the same family. Sending a spent refresh token
    ///   again is reuse: the whole family (its refresh and access tokens) is revoked and the answer is `400` with
    ///   `invalid_grant`, as many providers do. An unknown token gets `invalid_grant` too.
    /// - `GET <resourcePath>` with `Authorization: Bearer <access token>`: `200` with `{"ok":true}` for a live,
    ///   unexpired access token; `401` otherwise.
    ///
    /// ``counts`` tells a test what happened, from any process's requests: the token requests, the `invalid_grant`
    /// answers, the reuses, the resource calls.
    ///
    /// ```swift
    /// let tokens = RotatingTokenServer()
    /// tokens.install(on: server)
    /// let family = tokens.startFamily()      // its access token has already expired
    /// ```
    public final class RotatingTokenServer: Sendable {
        /// What the endpoint has seen.
        public struct Counts: Sendable, Equatable {
            /// Requests to the token endpoint.
            public var tokenRequests = 0
            /// Token requests answered with a new credential.
            public var rotations = 0
            /// Token requests answered with `invalid_grant`.
            public var invalidGrants = 0
            /// Spent refresh tokens sent again (each revoked its family).
            public var reuses = 0
            /// Resource calls answered `200`.
            public var authorizedCalls = 0
            /// Resource calls answered `401`.
            public var rejectedCalls = 0
        }

        private struct Family {
            var currentRefreshToken: String
            var spentRefreshTokens: Set<String> = []
            var accessTokens: [String: Date] = [:]
            var revoked = false
        }

        private struct State {
            var families: [Int: Family] = [:]
            var familyOfRefreshToken: [String: Int] = [:]
            var familyOfAccessToken: [String: Int] = [:]
            var counts = Counts()
            var rotationTimes: [Date] = []
            var serial = 0
        }

        /// How long an issued access token lives, in seconds.
        public let accessTokenLifetime: Int
        private let state = LockedBox(State())

        /// Creates an endpoint whose access tokens live `accessTokenLifetime` seconds (one hour by default).
        public init(accessTokenLifetime: Int = 3600) {
            self.accessTokenLifetime = accessTokenLifetime
        }

        /// Registers the token endpoint and the resource on `server`.
        ///
        /// - Parameters:
        ///   - server: The server to answer on.
        ///   - tokenPath: The token endpoint's path; default `/oauth/token`.
        ///   - resourcePath: The protected resource's path; default `/fleet/resource`.
        public func install(
            on server: TestServer, tokenPath: String = "/oauth/token", resourcePath: String = "/fleet/resource"
        ) {
            server.register("POST", tokenPath) { [self] request in token(request) }
            server.register("GET", resourcePath) { [self] request in resource(request) }
        }

        /// Starts a token family: an access token that has already expired and a current refresh token.
        public func startFamily() -> (accessToken: String, refreshToken: String) {
            state.withLock { state in
                state.serial += 1
                let id = state.serial
                let access = "access-\(id)-0-\(UUID().uuidString)"
                let refresh = "refresh-\(id)-0-\(UUID().uuidString)"
                var family = Family(currentRefreshToken: refresh)
                family.accessTokens[access] = Date.distantPast
                state.families[id] = family
                state.familyOfRefreshToken[refresh] = id
                state.familyOfAccessToken[access] = id
                return (access, refresh)
            }
        }

        /// What the endpoint has seen so far.
        public var counts: Counts { state.withLock { $0.counts } }

        /// When each successful rotation was answered, in order.
        public var rotationTimes: [Date] { state.withLock { $0.rotationTimes } }

        private func token(_ request: TestServerRequest) -> TestServerResponse {
            let form = Dictionary(
                FormDecoding.decodeQuery(Substring(decoding: request.body, as: UTF8.self)),
                uniquingKeysWith: { first, _ in first })
            return state.withLock { state in
                state.counts.tokenRequests += 1
                guard form["grant_type"] == "refresh_token", let presented = form["refresh_token"],
                    let id = state.familyOfRefreshToken[presented], var family = state.families[id], !family.revoked
                else {
                    state.counts.invalidGrants += 1
                    return Self.invalidGrant("unknown or revoked refresh token")
                }
                guard presented == family.currentRefreshToken else {
                    // Reuse of a spent token: revoke the whole family.
                    family.revoked = true
                    family.accessTokens.removeAll()
                    state.families[id] = family
                    state.counts.reuses += 1
                    state.counts.invalidGrants += 1
                    return Self.invalidGrant("refresh token reused; the token family is revoked")
                }
                state.serial += 1
                let access = "access-\(id)-\(state.serial)-\(UUID().uuidString)"
                let refresh = "refresh-\(id)-\(state.serial)-\(UUID().uuidString)"
                family.spentRefreshTokens.insert(presented)
                family.currentRefreshToken = refresh
                family.accessTokens[access] = Date().addingTimeInterval(TimeInterval(accessTokenLifetime))
                state.families[id] = family
                state.familyOfRefreshToken[refresh] = id
                state.familyOfAccessToken[access] = id
                state.counts.rotations += 1
                state.rotationTimes.append(Date())
                return .json(
                    #"{"access_token":"\#(access)","token_type":"Bearer","expires_in":\#(accessTokenLifetime),"#
                        + #""refresh_token":"\#(refresh)"}"#)
            }
        }

        private func resource(_ request: TestServerRequest) -> TestServerResponse {
            let authorization = request.header("Authorization") ?? ""
            let token = authorization.hasPrefix("Bearer ") ? String(authorization.dropFirst(7)) : ""
            return state.withLock { state in
                if let id = state.familyOfAccessToken[token], let family = state.families[id], !family.revoked,
                    let expiry = family.accessTokens[token], expiry > Date()
                {
                    state.counts.authorizedCalls += 1
                    return .json(#"{"ok":true}"#)
                }
                state.counts.rejectedCalls += 1
                return TestServerResponse(
                    status: 401, headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)])
            }
        }

        private static func invalidGrant(_ description: String) -> TestServerResponse {
            .json(#"{"error":"invalid_grant","error_description":"\#(description)"}"#, status: 400)
        }
    }
#endif
