import Courier
import CourierTestServer
import Foundation
import HTTPTypes
import Testing

extension Conformance {
    /// Row 31 on real sockets: 1,000 concurrent requests rejected with the same token share one refresh.
    @Suite("Conformance: token refresh under load", .timeLimit(.minutes(2)))
    struct AuthConformanceTests {
        /// The server side: issues `access-N`, accepts only the newest, and counts what it saw.
        ///
        /// A request signed after the refresh began waits for the new token instead of going out with the old one
        /// (the authenticator joins the refresh in flight), so how many requests the old token signs depends on
        /// scheduling. The token endpoint therefore answers once every request signed with the old token (counted
        /// by ``SignedWithOldToken``, an adapter after the authenticator's) was rejected: as late as possible, so
        /// the most requests share the refresh, and never waiting for a request that will not come.
        actor TokenServer {
            private(set) var issued = 1
            private(set) var tokenCalls = 0
            private(set) var signedWithOld = 0
            private(set) var rejections = 0
            private(set) var accepted = 0
            private var waitingForRejections: [CheckedContinuation<Void, Never>] = []

            /// A request left the adapters with `authorization`.
            func signed(_ authorization: String?) {
                if authorization == "Bearer access-expired" { signedWithOld += 1 }
            }

            /// Answers the protected route.
            func check(_ authorization: String?) -> Bool {
                if authorization == "Bearer access-\(issued)" {
                    accepted += 1
                    return true
                }
                rejections += 1
                if rejections >= signedWithOld {
                    for waiter in waitingForRejections { waiter.resume() }
                    waitingForRejections.removeAll()
                }
                return false
            }

            /// Issues the next token once every request signed with the old one was rejected.
            func refresh() async -> Int {
                tokenCalls += 1
                if rejections < signedWithOld {
                    await withCheckedContinuation { waitingForRejections.append($0) }
                }
                issued += 1
                return issued
            }
        }

        /// Tells the token server which token each attempt carries (it runs after the authenticator's adapter).
        struct SignedWithOldToken: RequestAdapter {
            let tokens: TokenServer
            var name: String { "count-signatures" }

            func adapt(_ request: OutgoingRequest, context: AdapterContext) async throws -> OutgoingRequest {
                await tokens.signed(request.head.headerFields[.authorization])
                return request
            }
        }

        struct Protected: Request {
            typealias Response = String
            var path: String { "/protected" }
            var authentication: AuthenticationRequirement { .required }
        }

        /// The embedded server with `tokens`' token endpoint and `/protected`, and a client of `transport` signed in
        /// with a token the server rejects (each call's token counted by ``SignedWithOldToken``).
        static func rejectedTokenLab(
            _ transport: TransportKind,
            configure: (inout Client.Configuration) -> Void = { _ in }
        ) async throws -> (server: TestServer, tokens: TokenServer, client: Client) {
            let server = try await TestServer.start()
            let tokens = TokenServer()
            server.register("POST", "/oauth/token") { _ in
                let number = await tokens.refresh()
                return .json(
                    #"{"access_token":"access-\#(number)","refresh_token":"refresh-\#(number)","expires_in":3600}"#)
            }
            server.register("GET", "/protected") { request in
                await tokens.check(request.header("Authorization"))
                    ? .text("ok")
                    : TestServerResponse(status: 401, headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)])
            }
            do {
                let plain = makeClient(transport, server.baseURL)
                let authenticator = Authenticator(
                    refresher: OAuth2RefreshTokenRefresher(client: plain, path: "/oauth/token", clientID: "conformance")
                )
                try await authenticator.signIn(Credential(accessToken: "access-expired", refreshToken: "refresh-1"))
                let client = makeClient(transport, server.baseURL) {
                    $0.authenticate(with: authenticator)
                    $0.adapters.append(SignedWithOldToken(tokens: tokens))
                    configure(&$0)
                }
                return (server, tokens, client)
            } catch {
                try? await server.shutdown()
                throw error
            }
        }

        @Test(
            "row 31: 1,000 concurrent calls on a rejected token → one refresh, each rejected call replayed once, all succeed",
            arguments: TransportKind.all)
        func thousandConcurrentRejections(transport: TransportKind) async throws {
            let count = 1000
            let (server, tokens, client) = try await Self.rejectedTokenLab(transport)
            do {
                let start = ContinuousClock.now
                let results = try await withThrowingTaskGroup(of: String.self) { group in
                    for _ in 0..<count { group.addTask { try await client.send(Protected()) } }
                    return try await group.reduce(into: [String]()) { $0.append($1) }
                }
                let elapsed = ContinuousClock.now - start

                #expect(results.count == count && results.allSatisfy { $0 == "ok" })
                #expect(await tokens.tokenCalls == 1)
                // Every request signed with the old token was rejected once and replayed once; the others waited
                // for the refresh and went out once, with the new token.
                #expect(await tokens.rejections == tokens.signedWithOld)
                #expect(await tokens.signedWithOld >= 1)
                #expect(await tokens.accepted == count)
                print(
                    "row 31 on \(transport.name): \(count) requests, \(await tokens.tokenCalls) refresh, \(await tokens.rejections) rejections of \(await tokens.signedWithOld) signed with the old token, \(await tokens.accepted) replays accepted, \(elapsed)"
                )
                try await server.shutdown()
            } catch {
                try? await server.shutdown()
                throw error
            }
        }
    }
}
