import Courier
import Foundation
import HTTPTypes

// Scenario 11: an LLM-style completion, rendered token by token as the server flushes it, and a second one
// cancelled mid-stream.

/// A streamed chat completion: the call returns at the head, the body is read as Server-Sent Events.
struct StreamCompletion: Request {
    typealias Response = LiveResponse
    let prompt: String
    var interval: Int = 30
    var method: HTTPRequest.Method { .post }
    var path: String { "/completion" }
    var query: Parameters? { ["interval_ms": "\(interval)"] }
    var body: RequestBody? { .json(["prompt": prompt]) }
}

/// One chunk of a chat-completion stream, as LLM APIs send them.
struct CompletionChunk: Decodable, Sendable {
    struct Choice: Decodable, Sendable {
        struct Delta: Decodable, Sendable { let content: String? }
        let delta: Delta
        let finishReason: String?

        enum CodingKeys: String, CodingKey {
            case delta
            case finishReason = "finish_reason"
        }
    }
    let choices: [Choice]
}

extension Scenarios {
    static let streaming = Scenario(
        number: 11,
        title: "A streamed completion, rendered as it arrives; another cancelled mid-stream",
        runsAgainstExternalTarget: false
    ) { demo in
        let activity = ActivityTracker()
        let client = demo.client { $0.activity = activity }

        // 1. Render every token as it arrives, until `[DONE]`.
        let started = ContinuousClock.now
        var firstToken: Duration?
        var text = ""
        var finishReason: String?
        demo.terminal.write("    ")
        let live = try await client.send(StreamCompletion(prompt: "What does Courier do with a stream?"))
        let headAfter = ContinuousClock.now - started
        for try await event in live.serverSentEvents() where event.data != "[DONE]" {
            let chunk = try JSONDecoder().decode(CompletionChunk.self, from: Data(event.data.utf8))
            for choice in chunk.choices {
                if let token = choice.delta.content {
                    if firstToken == nil { firstToken = ContinuousClock.now - started }
                    text += token
                    demo.terminal.write(token)
                }
                finishReason = choice.finishReason ?? finishReason
            }
        }
        let total = ContinuousClock.now - started
        demo.terminal.line("")
        demo.terminal.detail(
            "head after \(milliseconds(headAfter)) ms, first token after \(milliseconds(firstToken ?? total)) ms, "
                + "all after \(milliseconds(total)) ms")

        // 2. Stop reading after five tokens: cancelling the task closes the connection.
        let reader = Task {
            var tokens: [String] = []
            let live = try await client.send(StreamCompletion(prompt: "Cancel me", interval: 50))
            for try await event in live.serverSentEvents(of: CompletionChunk.self) {
                tokens += event.data.choices.compactMap(\.delta.content)
                if tokens.count == 5 { withUnsafeCurrentTask { $0?.cancel() } }
            }
            return tokens
        }
        let cancelled: Bool
        var received = 0
        switch await reader.result {
        case .success(let tokens):
            received = tokens.count
            cancelled = false
        case .failure(let error):
            cancelled = error is CancellationError
        }
        demo.terminal.detail(
            "second stream: \(cancelled ? "cancelled after 5 tokens" : "\(received) tokens, not cancelled")")

        return check(
            text.hasPrefix("You asked: \"What does Courier do with a stream?\""), "the answer streamed in full",
            terminal: demo.terminal)
            & check(finishReason == "stop", "finish_reason == \"stop\", then [DONE]", terminal: demo.terminal)
            & check(
                (firstToken ?? total) < total / 2, "the first token came long before the last", terminal: demo.terminal)
            & check(cancelled, "cancelling the reader ends its stream with CancellationError", terminal: demo.terminal)
            & check(activity.inFlight == 0, "no call left in flight", terminal: demo.terminal)
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}
