import Courier
import CourierOpenAPI
import CourierTestServer
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

/// Courier's decisions and cache under a generated client, on both transports: a 503 retried, a 401 refreshed, a
/// cacheable GET answered from the cache, cancellation, and where the generated client's middlewares run.
@Suite("CourierTransport: Courier's pipeline under a generated client", .timeLimit(.minutes(2)))
struct CourierTransportPipelineTests {
    @Test(
        "a 503 is retried by Courier; a middleware runs once and sees only the final 200", arguments: TransportKind.all)
    func retry(transport: TransportKind) async throws {
        try await withTestServer { server in
            let key = UUID().uuidString
            let hits = Counter()
            server.register("GET", "/flaky/\(key)") { _ in
                hits.increment() == 1 ? TestServerResponse(status: 503) : .json(#"{"name":"after the retry"}"#)
            }
            let events = EventCapture()
            let middleware = RecordingMiddleware()
            let api = try generatedClient(
                makeCourier(transport, server.baseURL, events: events), middlewares: [middleware])

            let greeting = try await api.getFlaky(path: .init(key: key)).ok.body.json

            #expect(greeting.name == "after the retry")
            #expect(hits.count == 2)
            #expect(middleware.statuses == [200])
            let seen = await events.untilCallsEnded()
            #expect(seen.contains { if case .retried = $0 { true } else { false } })
            #expect(seen.decisionSteps.contains("retry restarted"))
            #expect(seen.allSatisfy { $0.requestName == "getFlaky" })
        }
    }

    @Test("a 401 refreshes the token once and the operation is replayed with the new one", arguments: TransportKind.all)
    func refresh(transport: TransportKind) async throws {
        try await withTestServer { server in
            let refreshes = Counter()
            server.register("POST", "/oauth/token") { _ in
                refreshes.increment()
                return .json(#"{"access_token":"access-2","refresh_token":"refresh-2","expires_in":3600}"#)
            }
            server.register("GET", "/protected") { request in
                request.header("Authorization") == "Bearer access-2"
                    ? .json(#"{"authenticated":true,"token":"access-2"}"#)
                    : TestServerResponse(status: 401, headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)])
            }
            let authenticator = Authenticator(
                refresher: OAuth2RefreshTokenRefresher(
                    client: makeCourier(transport, server.baseURL), path: "/oauth/token", clientID: "openapi"))
            try await authenticator.signIn(Credential(accessToken: "access-1", refreshToken: "refresh-1"))
            let events = EventCapture()
            let courier = makeCourier(transport, server.baseURL, events: events) {
                $0.authenticate(with: authenticator)
            }

            let body = try await generatedClient(courier).getProtected().ok.body.json

            #expect(body.authenticated && body.token == "access-2")
            #expect(refreshes.count == 1)
            let seen = await events.untilCallsEnded()
            #expect(seen.contains { if case .refreshed = $0 { true } else { false } })
            #expect(seen.allSatisfy { $0.requestName == "getProtected" })
        }
    }

    @Test("a buffered cacheable GET is answered from Courier's cache the second time", arguments: TransportKind.all)
    func cacheHit(transport: TransportKind) async throws {
        try await withTestServer { server in
            let events = EventCapture()
            let courier = makeCourier(transport, server.baseURL, events: events) { $0.cache = HTTPCache.memory() }
            let api = try generatedClient(courier, configuration: .init(bufferedOperationIDs: ["getCached"]))
            let before = server.requestCount

            let first = try await api.getCached(path: .init(seconds: 60)).ok.body.json
            let second = try await api.getCached(path: .init(seconds: 60)).ok.body.json

            #expect(server.requestCount - before == 1, "the second call never reached the server")
            #expect(first == second)
            let seen = await events.untilCallsEnded(2)
            #expect(seen.contains { if case .cached(.hit) = $0 { true } else { false } })
            #expect(seen.allSatisfy { $0.requestName == "getCached" })
        }
    }

    @Test(
        "a streamed cacheable GET is stored once the generated code has read it, and answered from the cache next",
        arguments: TransportKind.all)
    func streamedIsCached(transport: TransportKind) async throws {
        try await withTestServer { server in
            let events = EventCapture()
            let cache = HTTPCache.memory()
            let courier = makeCourier(transport, server.baseURL, events: events) { $0.cache = cache }
            let api = try generatedClient(courier)
            let before = server.requestCount

            let first = try await api.getCached(path: .init(seconds: 60)).ok.body.json
            #expect(cache.count == 1, "the body was read to its end, so it is stored")
            let second = try await api.getCached(path: .init(seconds: 60)).ok.body.json

            #expect(server.requestCount - before == 1, "the second call never reached the server")
            #expect(first == second)
            let seen = await events.untilCallsEnded(2)
            #expect(seen.contains { if case .cached(.hit) = $0 { true } else { false } })
        }
    }

    @Test("a streamed body past the cache's maxStreamedBodySize streams whole and is not stored")
    func streamedOverLimitIsNotStored() async throws {
        try await withTestServer { server in
            let cache = HTTPCache.memory()
            let small = try HTTPCache(maxStreamedBodySize: 16)
            for (store, stored) in [(cache, 1), (small, 0)] {
                let courier = makeCourier(.asyncHTTPClient, server.baseURL) { $0.cache = store }
                let api = try generatedClient(courier)
                _ = try await api.getCached(path: .init(seconds: 60)).ok.body.json
                #expect(store.count == stored)
            }
        }
    }

    @Test("cancelling the calling task cancels the call promptly", arguments: TransportKind.all)
    func cancellation(transport: TransportKind) async throws {
        try await withTestServer { server in
            let events = EventCapture()
            let api = try generatedClient(makeCourier(transport, server.baseURL, events: events))
            let call = Task { try await api.getDelayed(path: .init(seconds: 30)) }
            _ = await events.until { if case .sent = $0 { true } else { false } }
            let start = ContinuousClock.now
            call.cancel()
            let result = await call.result
            #expect(ContinuousClock.now - start < .seconds(10))
            guard case .failure(let error) = result else {
                Issue.record("the cancelled call succeeded")
                return
            }
            let underlying = (error as? ClientError)?.underlyingError ?? error
            #expect(underlying is CancellationError, "\(error)")
        }
    }

    @Test("by default the Courier client's server is used; usesGeneratedServerURL sends to the generated one")
    func serverSelection() async throws {
        try await withTestServer { courierServer in
            try await withTestServer { generatedServer in
                let courier = makeCourier(.asyncHTTPClient, courierServer.baseURL)
                let viaCourier = Client(
                    serverURL: generatedServer.baseURL, transport: CourierTransport(client: courier))
                let viaGenerated = Client(
                    serverURL: generatedServer.baseURL,
                    transport: CourierTransport(client: courier, configuration: .init(usesGeneratedServerURL: true)))

                let first = try await viaCourier.getEcho(query: .init()).ok.body.json
                let second = try await viaGenerated.getEcho(query: .init()).ok.body.json

                #expect(first.url.contains(":\(courierServer.port)/"), "\(first.url)")
                #expect(second.url.contains(":\(generatedServer.port)/"), "\(second.url)")
            }
        }
    }
}
