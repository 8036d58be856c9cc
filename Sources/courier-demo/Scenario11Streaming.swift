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
        var sawDone = false
        demo.terminal.write("    ")
        var headAfter = Duration.zero
        do {
            // In a block of its own: leaving it drops the response, which closes the call (and its connection) at
            // once, also when the loop stops at `[DONE]` before the server closed the stream.
            let live = try await client.send(StreamCompletion(prompt: "What does Courier do with a stream?"))
            headAfter = ContinuousClock.now - started
            for try await event in live.serverSentEvents() {
                // The stream's end, as the server says it: reading past it would wait for the connection to close.
                if event.data == "[DONE]" {
                    sawDone = true
                    break
                }
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
        }
        let total = ContinuousClock.now - started
        demo.terminal.line("")
        demo.terminal.detail(
            "head after \(milliseconds(headAfter)) ms, first token after \(milliseconds(firstToken ?? total)) ms, "
                + "all after \(milliseconds(total)) ms")

        // 2. Stop reading after five tokens: cancelling the task closes the connection.
        let counted = LockedBox(0)  // tokens the reader saw
        let reader = Task {
            let live = try await client.send(StreamCompletion(prompt: "Cancel me", interval: 50))
            for try await event in live.serverSentEvents(of: CompletionChunk.self, terminator: "[DONE]") {
                let tokens = event.data.choices.compactMap(\.delta.content).count
                let seen = counted.withLock { count in
                    count += tokens
                    return count
                }
                if seen >= 5 {
                    withUnsafeCurrentTask { $0?.cancel() }
                }
            }
        }
        let cancelled: Bool
        switch await reader.result {
        case .success:
            cancelled = false
            demo.terminal.detail("second stream: \(counted.withLock { $0 }) tokens, ended without being cancelled")
        case .failure(let error):
            cancelled = error is CancellationError
            demo.terminal.detail(
                cancelled
                    ? "second stream: cancelled after \(counted.withLock { $0 }) tokens"
                    : "second stream: failed after \(counted.withLock { $0 }) tokens: \(error)")
        }

        return check(
            text.hasPrefix("You asked: \"What does Courier do with a stream?\""), "the answer streamed in full",
            terminal: demo.terminal)
            & check(
                finishReason == "stop" && sawDone, "finish_reason == \"stop\", then [DONE]", terminal: demo.terminal)
            & check(
                (firstToken ?? total) < total / 2, "the first token came long before the last", terminal: demo.terminal)
            & check(
                cancelled && counted.withLock { $0 } >= 5,
                "cancelling the reader after 5 tokens ends its stream with CancellationError",
                terminal: demo.terminal)
            & check(activity.inFlight == 0, "no call left in flight", terminal: demo.terminal)
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}
