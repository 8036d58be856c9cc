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
        actor TokenServer {
            let expectedRejections: Int
            private(set) var issued = 1
            private(set) var tokenCalls = 0
            private(set) var rejections = 0
            private(set) var accepted = 0
            private var waitingForRejections: [CheckedContinuation<Void, Never>] = []

            init(expectedRejections: Int) { self.expectedRejections = expectedRejections }

            /// Answers the protected route.
            func check(_ authorization: String?) -> Bool {
                if authorization == "Bearer access-\(issued)" {
                    accepted += 1
                    return true
                }
                rejections += 1
                if rejections >= expectedRejections {
                    for waiter in waitingForRejections { waiter.resume() }
                    waitingForRejections.removeAll()
                }
                return false
            }

            /// Issues the next token once every request signed with the old one was rejected, so no request can be
            /// signed with the new token before its first attempt.
            func refresh() async -> Int {
                tokenCalls += 1
                if rejections < expectedRejections {
                    await withCheckedContinuation { waitingForRejections.append($0) }
                }
                issued += 1
                return issued
            }
        }

        struct Protected: Request {
            typealias Response = String
            var path: String { "/protected" }
            var authentication: AuthenticationRequirement { .required }
        }

        @Test(
            "row 31: 1,000 concurrent 401s → one refresh, every request replayed once, all succeed",
            arguments: TransportKind.all)
        func thousandConcurrentRejections(transport: TransportKind) async throws {
            let count = 1000
            let server = try await TestServer.start()
            let tokens = TokenServer(expectedRejections: count)
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
                let client = makeClient(transport, server.baseURL) { $0.authenticate(with: authenticator) }

                let start = ContinuousClock.now
                let results = try await withThrowingTaskGroup(of: String.self) { group in
                    for _ in 0..<count { group.addTask { try await client.send(Protected()) } }
                    return try await group.reduce(into: [String]()) { $0.append($1) }
                }
                let elapsed = ContinuousClock.now - start

                #expect(results.count == count && results.allSatisfy { $0 == "ok" })
                #expect(await tokens.tokenCalls == 1)
                #expect(await tokens.rejections == count)
                #expect(await tokens.accepted == count)
                print(
                    "row 31 on \(transport.name): \(count) requests, \(await tokens.tokenCalls) refresh, \(await tokens.rejections) rejections, \(await tokens.accepted) replays accepted, \(elapsed)"
                )
                try await server.shutdown()
            } catch {
                try? await server.shutdown()
                throw error
            }
        }
    }
}
