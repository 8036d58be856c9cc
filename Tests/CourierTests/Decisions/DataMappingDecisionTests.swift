import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

private struct Profile: Decodable, Sendable, Equatable {
    var name: String?
    var age: Int?
}

private struct Dummy: Decodable, Sendable, Equatable {
    var dummy: String
}

@Suite("DataMappingDecision", .timeLimit(.minutes(1)))
struct DataMappingDecisionTests {
    @Test("mapEmptyBody turns an empty 200 into {} so a struct with optional fields decodes")
    func emptyBodyBecomesEmptyObject() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .status(200))
        let probe = DecisionFixtures.jsonProbe(Profile.self, decisions: [.validateStatus(), .mapEmptyBody()])
        let profile = try await client.send(probe)
        #expect(profile == Profile(name: nil, age: nil))
    }

    @Test("without mapEmptyBody the same empty 200 fails to decode")
    func emptyBodyWithoutMappingFails() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .status(200))
        let probe = DecisionFixtures.jsonProbe(Profile.self, decisions: [.validateStatus()])
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect(error.code == .decodingFailed)
    }

    @Test("a non-empty body is left untouched and mapEmptyBody does not appear in the trace")
    func nonEmptyBodyUntouched() async throws {
        let capture = DecisionFixtures.LogCapture()
        let (client, mock) = Fixtures.client { $0.logger = capture.logger() }
        mock.stub(.get, "/probe", with: .json(raw: #"{"name":"Ada","age":36}"#))
        let probe = DecisionFixtures.jsonProbe(Profile.self, decisions: [.validateStatus(), .mapEmptyBody()])
        #expect(try await client.send(probe) == Profile(name: "Ada", age: 36))
        let line = try #require(capture.messages.onlyElement)
        #expect(line.hasSuffix("[validateStatus ✓ → parse ✓]"))
        #expect(!line.contains("mapEmptyBody"))
    }

    @Test("an empty body is mapped and the mapping is in the trace")
    func mappingIsTraced() async throws {
        let capture = DecisionFixtures.LogCapture()
        let (client, mock) = Fixtures.client { $0.logger = capture.logger() }
        mock.stub(.get, "/probe", with: .status(200))
        let probe = DecisionFixtures.jsonProbe(Profile.self, decisions: [.validateStatus(), .mapEmptyBody()])
        _ = try await client.send(probe)
        #expect(capture.messages.onlyElement?.hasSuffix("[validateStatus ✓ → mapEmptyBody ✓ → parse ✓]") == true)
    }

    @Test("mapEmptyBody(to:) uses the given replacement")
    func customReplacement() async throws {
        let decision = DataMappingDecision.mapEmptyBody(to: Data("[]".utf8))
        let empty = DecisionFixtures.received(200)
        #expect(decision.shouldApply(to: empty, context: DecisionFixtures.context()))
        let action = try await decision.decide(empty, context: DecisionFixtures.context())
        #expect(action.caseName == "continue")
        #expect(action.response?.body == Data("[]".utf8))
        #expect(action.response?.status.code == 200)
        #expect(decision.name == "mapEmptyBody")
        #expect(
            !decision.shouldApply(to: DecisionFixtures.received(200, body: "x"), context: DecisionFixtures.context()))
    }

    @Test("mapData supplies dummy data while the server is not ready")
    func dummyDataForServerNotReady() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .text("<html>Not Found</html>", status: 404))
        let probe = DecisionFixtures.jsonProbe(
            Dummy.self,
            decisions: [
                .mapData(when: { _ in true }) { _ in Data(#"{"dummy":"data"}"#.utf8) },
                .validateStatus(acceptable: { _ in true }),
            ]
        )
        #expect(try await client.send(probe) == Dummy(dummy: "data"))
        #expect(mock.recordedRequests.count == 1)
    }

    @Test("mapData's condition sees the response, and a false condition leaves the body alone")
    func conditionIsConsulted() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .text("real", status: 200))
        let seen = DecisionFixtures.Journal()
        let probe = DecisionFixtures.textProbe(
            decisions: [
                .mapData(
                    when: { response in
                        seen.record("\(response.status.code)")
                        return response.status.code == 503
                    },
                    transform: { _ in Data("dummy".utf8) }
                )
            ]
        )
        #expect(try await client.send(probe) == "real")
        #expect(seen.entries == ["200"])
    }

    @Test("a throwing transform fails the call at decide, keeping the error")
    func throwingTransformFails() async throws {
        let (client, mock) = Fixtures.client()
        mock.stub(.get, "/probe", with: .status(200))
        let probe = DecisionFixtures.textProbe(
            decisions: [.mapData(when: { _ in true }) { _ in throw DecisionFixtures.Failure(reason: "no dummy") }]
        )
        let error = try #require(await expectCourierError { try await client.send(probe) })
        #expect(error.stage == .decide)
        #expect(error.code == .decisionFailed)
        #expect(error.underlyingError as? DecisionFixtures.Failure == DecisionFixtures.Failure(reason: "no dummy"))
        #expect(error.trace.description == "mapData ✗")
    }
}
