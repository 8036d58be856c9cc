import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("DecisionContext", .timeLimit(.minutes(1)))
struct DecisionContextTests {
    private static let chain: [any Decision] = [
        RetryDecision(remaining: 1), ValidateStatusDecision(), DataMappingDecision.mapEmptyBody(),
    ]

    @Test("decisions(replacingCurrentWith:) swaps the running decision in place", arguments: [0, 1, 2])
    func replacesInPlace(index: Int) {
        let context = DecisionFixtures.context(decisions: Self.chain, index: index)
        let replaced = context.decisions(
            replacingCurrentWith: ClosureDecision(name: "successor") { r, _ in .continue(with: r) })
        var expected = Self.chain.map(\.name)
        expected[index] = "successor"
        #expect(replaced.map(\.name) == expected)
    }

    @Test("with no running decision in range, the successor goes first")
    func outOfRangeInsertsFirst() {
        let context = DecisionFixtures.context(decisions: Self.chain, index: 7)
        let replaced = context.decisions(
            replacingCurrentWith: ClosureDecision(name: "successor") { r, _ in .continue(with: r) })
        #expect(replaced.map(\.name) == ["successor", "retry", "validateStatus", "mapEmptyBody"])
        let empty = DecisionFixtures.context(decisions: [], index: 0)
        #expect(empty.decisions(replacingCurrentWith: RetryDecision(remaining: 1)).map(\.name) == ["retry"])
    }

    @Test("the client's clock and decoder reach the decisions")
    func clientPartsReachDecisions() async throws {
        let clock = DecisionFixtures.RecordingClock()
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let (client, mock) = Fixtures.client {
            $0.clock = clock
            $0.jsonDecoder = decoder
        }
        mock.stub(.get, "/probe", with: .text("x"))
        let seen = DecisionFixtures.Journal()
        let probe = DecisionFixtures.textProbe(
            decisions: [
                .custom("inspect") { response, context in
                    try await context.clock.sleep(for: .seconds(2), tolerance: nil)
                    let snake =
                        if case .convertFromSnakeCase = context.jsonDecoder.keyDecodingStrategy { true } else { false }
                    seen.record("snake=\(snake)")
                    return .continue(with: response)
                }
            ]
        )
        #expect(try await client.send(probe) == "x")
        #expect(clock.sleeps == [.seconds(2)])
        #expect(seen.entries == ["snake=true"])
    }
}
