#if TestServer
    import Foundation
    import NIOCore

    /// Live-stream routes: Server-Sent Events (`/sse`), JSON Lines (`/ndjson`), an LLM-style completion
    /// (`/completion`) and the gates that hold them (`/sse-release/{name}`).
    enum EventRoutes {
        static func handle(_ name: Substring, _ context: RouteContext) async throws -> Disposition {
            switch name {
            case "sse": try await serverSentEvents(context)
            case "ndjson": try await jsonLines(context)
            case "completion": try await completion(context)
            default: try await release(context)
            }
        }

        /// `/sse?count=5&interval_ms=0&drop_after=&retry=&heartbeat=0&hold=&status=&size=`: an event stream of
        /// `count` events `id: n`, `event: tick`, `data: {"n":n}`, one chunk each.
        ///
        /// - It resumes after the request's `Last-Event-ID` (`n` = that id + 1), and answers `204` when nothing is
        ///   left, as a server that wants the client to stop reconnecting does.
        /// - `status`: answer that status with a small text body instead (`401`, `503`, `204` …); a `2xx` other than
        ///   `204` (`202`, `206`) answers the event stream itself under that status, as a misconfigured server does.
        /// - `replay=k`: resume `k` events before the one after `Last-Event-ID` (events the client already has).
        /// - `bearer`: answer `401` with a Bearer `invalid_token` challenge unless `Authorization: Bearer {bearer}`.
        /// - `retry`: a `retry: ms` block first. `heartbeat=1`: a `: heartbeat` comment before each event;
        ///   `heartbeat_ms=m`: one every `m` ms while waiting between events (a quiet stream that stays alive).
        /// - `size`: pad each event's data with that many `x` (a giant event).
        /// - `drip_ms=m`: write each event one byte at a time, `m` ms apart (a slow drip).
        /// - `stamp=1`: put the server's monotonic clock in each event's data (`"t"`, nanoseconds), read just before
        ///   the event is flushed: a client on the same machine can tell how long delivery took.
        /// - `hold`: after the first event, wait until `/sse-release/{hold}` is requested: the stream can only go on
        ///   once the client has seen the first event, so a client that coalesces small chunks never gets there.
        /// - `drop_after=k`: close the connection abruptly after `k` events of this response (no last chunk); `0`: right
        ///   after the head. With `partial=1`, the first half of the next event goes out before the close (a client
        ///   must not dispatch it).
        /// - `batch=b`: write `b` events per chunk (fewer, larger writes; a drop still comes after `k` events).
        private static func serverSentEvents(_ context: RouteContext) async throws -> Disposition {
            let status = context.query("status").flatMap { Int($0) }.flatMap { (200..<600).contains($0) ? $0 : nil }
            if let status, !(200..<300).contains(status) || status == 204 {
                if status == 204 { return try await context.status(204) }
                return try await context.respond(.text("status \(status)", status: status))
            }
            if let bearer = context.query("bearer"), context.request.header("Authorization") != "Bearer \(bearer)" {
                return try await context.respond(
                    TestServerResponse(
                        status: 401, headers: [("WWW-Authenticate", #"Bearer realm="sse", error="invalid_token""#)]))
            }
            let count = min(max(context.query("count").flatMap { Int($0) } ?? 5, 0), 100_000)
            let interval = Duration.milliseconds(
                min(max(context.query("interval_ms").flatMap { Int($0) } ?? 0, 0), 10_000))
            let dropAfter = context.query("drop_after").flatMap { Int($0) }
            let padding = String(
                repeating: "x", count: min(max(context.query("size").flatMap { Int($0) } ?? 0, 0), 16 << 20))
            // `replay`: resume this many events early, as a server whose log is coarser than its IDs does; still
            // 204 once nothing new is left.
            let replay = min(max(context.query("replay").flatMap { Int($0) } ?? 0, 0), 100)
            let next = context.request.header("Last-Event-ID").flatMap { Int($0) }.map { $0 + 1 } ?? 0
            guard next < count else { return try await context.status(204) }
            let first = max(next - replay, 0)
            try await context.writeChunkedHead(
                status: status ?? 200,
                headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
            if let retry = context.query("retry").flatMap({ Int($0) }) {
                try await write("retry: \(retry)\n\n", context)
            }
            if dropAfter == 0 { return .close }
            let heartbeat = context.query("heartbeat_ms").flatMap { Int($0) }.map { Duration.milliseconds(max($0, 1)) }
            let drip = context.query("drip_ms").flatMap { Int($0) }.map { Duration.milliseconds(max($0, 0)) }
            let batch = min(max(context.query("batch").flatMap { Int($0) } ?? 1, 1), 10_000)
            var pending = ""
            var sent = 0
            for number in first..<count {
                if sent > 0, interval > .zero { try await pause(interval, heartbeat: heartbeat, context) }
                if context.query("heartbeat") == "1" { try await write(": heartbeat\n\n", context) }
                var data = "{\"n\":\(number)"
                if !padding.isEmpty { data += ",\"pad\":\"\(padding)\"" }
                if context.query("stamp") == "1" { data += ",\"t\":\(monotonicNanoseconds())" }
                let event = "id: \(number)\nevent: tick\ndata: \(data)}\n\n"
                if let drip {
                    for byte in event.utf8 {
                        try await context.writeChunk(context.connection.channel.allocator.buffer(bytes: [byte]))
                        if drip > .zero { try await Task.sleep(for: drip) }
                    }
                } else {
                    pending += event
                }
                sent += 1
                let holds = sent == 1 ? context.query("hold") : nil
                // Before the hold too: the client is to see the first event while the stream waits (with a batch,
                // it was still buffered, and a client that opens the gate once it has it waited for ever).
                if sent % batch == 0 || number == count - 1 || sent == dropAfter || holds != nil {
                    try await write(pending, context)
                    pending = ""
                }
                if let holds { try await Gates.shared.wait(holds) }
                if let dropAfter, sent >= dropAfter {
                    if context.query("partial") == "1", number + 1 < count {
                        try await write("id: \(number + 1)\nevent: tick\ndata: {\"n\":", context)
                    }
                    return .close
                }
            }
            return try await context.finishChunked()
        }

        /// Waits `interval`, with a `: heartbeat` comment every `heartbeat` meanwhile.
        private static func pause(_ interval: Duration, heartbeat: Duration?, _ context: RouteContext) async throws {
            guard let heartbeat else { return try await Task.sleep(for: interval) }
            var remaining = interval
            while remaining > heartbeat {
                try await Task.sleep(for: heartbeat)
                remaining -= heartbeat
                try await write(": heartbeat\n\n", context)
            }
            try await Task.sleep(for: remaining)
        }

        /// The system's monotonic clock, which every process on the machine shares (`DispatchTime`: `CLOCK_MONOTONIC`
        /// on Linux, `mach_absolute_time` on Apple platforms).
        static func monotonicNanoseconds() -> UInt64 {
            DispatchTime.now().uptimeNanoseconds
        }

        /// `/ndjson?count=5&interval_ms=0&hold=`: `count` lines `{"n":n}`, one chunk each (`hold` as in `/sse`).
        private static func jsonLines(_ context: RouteContext) async throws -> Disposition {
            let count = min(max(context.query("count").flatMap { Int($0) } ?? 5, 0), 100_000)
            let interval = Duration.milliseconds(
                min(max(context.query("interval_ms").flatMap { Int($0) } ?? 0, 0), 10_000))
            try await context.writeChunkedHead(headers: [("Content-Type", "application/x-ndjson")])
            for number in 0..<count {
                if number > 0, interval > .zero { try await Task.sleep(for: interval) }
                try await write("{\"n\":\(number)}\n", context)
                if number == 0, let hold = context.query("hold") { try await Gates.shared.wait(hold) }
            }
            return try await context.finishChunked()
        }

        /// `POST /completion?interval_ms=30&tokens=`: a chat-completion stream as LLM APIs send it: one
        /// `data: {"id":…,"choices":[{"index":0,"delta":{"content":"…"}}]}` event per token of a fixed answer (the
        /// request body's `prompt` string, if any, is echoed in its first sentence), `interval_ms` apart, then a
        /// `finish_reason` of `stop` and `data: [DONE]`. `tokens` cuts the answer to that many tokens.
        private static func completion(_ context: RouteContext) async throws -> Disposition {
            let interval = Duration.milliseconds(
                min(max(context.query("interval_ms").flatMap { Int($0) } ?? 30, 0), 10_000))
            struct Prompt: Decodable { let prompt: String? }
            let prompt = (try? JSONDecoder().decode(Prompt.self, from: Data(context.request.body)))?.prompt
            let answer =
                "You asked: \"\(prompt ?? "nothing")\". Courier hands each token to your loop as soon as the server "
                + "flushes it, with the decisions run on the head first and the connection closed when you stop."
            var tokens = answer.split(separator: " ", omittingEmptySubsequences: false).enumerated().map {
                $0.offset == 0 ? String($0.element) : " " + $0.element
            }
            if let limit = context.query("tokens").flatMap({ Int($0) }) { tokens = Array(tokens.prefix(max(limit, 0))) }
            try await context.writeChunkedHead(headers: [
                ("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"),
            ])
            for (index, token) in tokens.enumerated() {
                if index > 0, interval > .zero { try await Task.sleep(for: interval) }
                let content = String(decoding: try JSONEncoder().encode(token), as: UTF8.self)
                try await write(
                    "data: {\"id\":\"cmpl-1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\(content)}}]}\n\n",
                    context)
            }
            try await write(
                "data: {\"id\":\"cmpl-1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
                    + "data: [DONE]\n\n", context)
            return try await context.finishChunked()
        }

        /// `/sse-release/{name}`: lets a stream held at `name` go on (before or after it started waiting): `204`.
        private static func release(_ context: RouteContext) async throws -> Disposition {
            guard let name = context.arguments.first else { return try await context.status(400) }
            Gates.shared.open(String(name))
            return try await context.status(204)
        }

        private static func write(_ text: String, _ context: RouteContext) async throws {
            try await context.writeChunk(context.connection.channel.allocator.buffer(string: text))
        }

        /// Named one-shot gates shared by every server in the process (tests name them uniquely).
        final class Gates: Sendable {
            static let shared = Gates()

            private struct State {
                var opened: Set<String> = []
                var waiting: [String: [UInt64: CheckedContinuation<Void, any Error>]] = [:]
                var nextWaiter: UInt64 = 0
            }

            private let state = LockedBox(State())

            /// Returns once `name` is opened (at once if it already was).
            ///
            /// - Throws: `CancellationError` when the waiting task is cancelled first (the server shutting down, its
            ///   connection closing), so that a stream held at a gate nobody opens never keeps ``TestServer/shutdown()``
            ///   waiting.
            func wait(_ name: String) async throws {
                let waiter = state.withLock { state in
                    defer { state.nextWaiter += 1 }
                    return state.nextWaiter
                }
                try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { continuation in
                        let resumeNow: Result<Void, any Error>? = state.withLock { state in
                            if state.opened.contains(name) { return .success(()) }
                            if Task.isCancelled { return .failure(CancellationError()) }
                            state.waiting[name, default: [:]][waiter] = continuation
                            return nil
                        }
                        if let resumeNow { continuation.resume(with: resumeNow) }
                    }
                } onCancel: {
                    let continuation = state.withLock { $0.waiting[name]?.removeValue(forKey: waiter) }
                    continuation?.resume(throwing: CancellationError())
                }
            }

            /// Opens `name`: its waiters and later ones go on.
            func open(_ name: String) {
                let waiters = state.withLock { state in
                    state.opened.insert(name)
                    return state.waiting.removeValue(forKey: name) ?? [:]
                }
                for waiter in waiters.values { waiter.resume() }
            }
        }
    }
#endif
