import Foundation
import HTTPTypes
import Logging

/// One call through Courier: resolve → adapt → validate → send → decide → parse, restarting when a decision asks.
///
/// Its asynchronous functions are `nonisolated(nonsending)`: they run on the executor of the task that runs the call
/// (a child task of `RequestRegistry`, on the global executor), without the switch to the generic executor that a
/// plain `nonisolated` async function makes when it starts and after each call it awaits (36 switches per
/// call before, 19 after, issue #17). Adapters, decisions and transports keep their own isolation.
struct Pipeline<R: Request>: Sendable {
    // The request is the last stored property: the others then sit at offsets known when compiling, and the
    // unspecialized code (a request type from another module) reads them without looking up `Pipeline<R>`'s
    // metadata for its field offsets.
    let client: Client
    let progress: (@Sendable (TransferProgress) -> Void)?
    /// The call's events for the client's monitors, or `nil` when it has none.
    private let events: CallEvents?
    let request: R
    /// The client's configuration (read through the client's one reference, not copied into every frame).
    private var configuration: Client.Configuration {
        _read { yield client.configuration }
    }

    /// Not inlined: building the call's events reads the request's properties, and those temporaries would be in the
    /// async frame of the caller, which a call keeps while it is in flight (issue #17).
    @inline(never)
    init(client: Client, request: R, progress: (@Sendable (TransferProgress) -> Void)? = nil) {
        self.client = client
        self.request = request
        self.progress = progress
        self.events = CallEvents.make(request: request, client: client)
    }

    /// Runs the call under the request's (or client's) deadline, then logs its one line.
    ///
    /// The asynchronous part is ``call(start:state:)`` alone; what comes before and after it runs in synchronous
    /// functions, so that the call records and log lines they build are on the thread's stack, not in an async frame
    /// that every call in flight keeps for its whole life (issue #17).
    nonisolated(nonsending) func run() async throws -> R.Response {
        let (start, state) = begin()
        do {
            let value = try await call(start: start, state: state)
            return end(value, start: start, state: state)
        } catch {
            throw end(error, start: start, state: state)
        }
    }

    /// Runs the call like ``run()`` and returns its value with what happened on the wire (only built here, so that
    /// ``run()`` does no redaction or copying it does not need).
    nonisolated(nonsending) func exchange() async throws -> Exchange<R.Response> {
        let (start, state) = begin()
        let value: R.Response
        do {
            value = try await call(start: start, state: state)
        } catch {
            throw end(error, start: start, state: state)
        }
        return exchange(end(value, start: start, state: state), start: start, state: state)
    }

    @inline(never)
    private func exchange(
        _ value: R.Response, start: Moment, state: CallState
    ) -> Exchange<R.Response> {
        let record = state.withLock { $0 }
        return Exchange(
            value: value,
            request: record.request.map(configuration.redactor.redact),
            response: record.response,
            trace: record.trace,
            attempts: max(1, record.attempt),
            duration: Moment.now - start,
            negotiatedProtocol: record.negotiatedProtocol,
            bodySize: record.bodySize
        )
    }

    /// The call's start: its clock, its record, the activity tracker's count and the `started` event.
    @inline(never)
    private func begin() -> (Moment, CallState) {
        let start = Moment.now
        // Locked when another task can reach the record: the attempts' task under a deadline, a live body's lease.
        let isShared = Self.isLive || timeout != nil
        let state = CallState.make(CallRecord(events: events), isShared: isShared)
        configuration.activity?.begin()
        events?.emitStarted()
        return (start, state)
    }

    /// The call itself, under its deadline when it has one.
    private nonisolated(nonsending) func call(start: Moment, state: CallState) async throws
        -> R.Response
    {
        if let timeout {
            return try await withDeadline(timeout, start: start, state: state)
        }
        return try await attempts(deadline: nil, state: state)
    }

    /// The call's success: its log line and `finished` event, or for a live response a lease that sends them when
    /// the body ends.
    @inline(never)
    private func end(_ value: R.Response, start: Moment, state: CallState) -> R.Response {
        if Self.isLive { return endLive(value, start: start, state: state) }
        _ = CallClosing.close(state, start: start, error: nil, client: client)
        configuration.activity?.end()
        return value
    }

    /// ``end(_:start:state:)`` for a ``LiveResponse``. A function of its own: the optional the cast makes is then
    /// in this frame only, and `end` looks up no optional type for the other calls (issue #17).
    @inline(never)
    private func endLive(_ value: R.Response, start: Moment, state: CallState) -> R.Response {
        if let live = value as? LiveResponse, let open = keepOpen(live, start: start, state: state) {
            return open  // the activity count ends with the body
        }
        _ = CallClosing.close(state, start: start, error: nil, client: client)
        configuration.activity?.end()
        return value
    }

    /// The call's failure: the error as the caller gets it, logged and sent as the `failed` event.
    @inline(never)
    private func end(_ error: any Error, start: Moment, state: CallState) -> any Error {
        if let credentials = request as? any CredentialBody {
            // Only on failure: the cast is a conformance lookup, which a successful call does not need.
            state.withLock { $0.bodySecrets = credentials.bodySecrets }
        }
        let finalized = CallClosing.close(state, start: start, error: error, client: client) ?? error
        configuration.activity?.end()
        return finalized
    }

    /// The call's deadline: the request's, or the client's. One expression for `call` and `begin`: a call that runs
    /// under a deadline must have a locked record (``CallState``), so the two must never disagree.
    private var timeout: Duration? { request.timeout ?? configuration.timeout }

    /// Whether the request's caller takes a redirect to another scheme itself (``ReturnsForeignRedirects``).
    private static var returnsForeignRedirects: Bool { R.self is any ReturnsForeignRedirects.Type }

    /// Whether the call returns a ``LiveResponse``, whose body outlives ``run()``.
    private static var isLive: Bool { R.Response.self == LiveResponse.self }

    /// `live` with a lease that ends the call when its body ends: the log line, the `finished` or `failed` event
    /// (with the bytes read) and the activity tracker's count wait for it.
    private func keepOpen(
        _ live: LiveResponse, start: Moment, state: CallState
    ) -> R.Response? {
        // The lease holds the client alone (one reference), and reads its configuration through it: a captured copy
        // of the configuration, or of the pipeline and its request, was copied and destroyed for every live call
        // (issue #17). No closure: its context was one more allocation per live call.
        let lease = StreamLease(client: client, record: state, start: start)
        return LiveResponse(head: live.head, body: live.body, lease: lease, limit: request.maxResponseBodySize)
            as? R.Response
    }

    /// The call under its deadline: it ends when the deadline passes, whether or not its steps stop when cancelled.
    ///
    /// The attempts run in a task of their own (which inherits the caller's priority and task-local values); the
    /// first of their end and the deadline resumes the caller (`DeadlineRace`). At the deadline, the attempts are
    /// cancelled: the transport's request, a back-off, a queue for a slot all end at once. A step that does not stop
    /// when cancelled (an adapter or token provider awaiting something uncancellable) no longer holds the caller: it
    /// finishes in the background, keeps its slot of `maxConcurrentRequests` until then, and its result and events
    /// are dropped (monitors see nothing of the call after its `failed`).
    /// Cancelling the caller cancels the attempts, which end the call as they stop (at the latest at the deadline).
    ///
    /// Not inlined: inlined, its locals made `call`'s frame, which every call in flight keeps, larger with or without
    /// a deadline (issue #17; sizes from the async function pointers' context sizes).
    @inline(never)
    private nonisolated(nonsending) func withDeadline(
        _ timeout: Duration,
        start: Moment,
        state: CallState
    ) async throws -> R.Response {
        let deadline = start.advanced(by: timeout)
        let race = DeadlineRace<R.Response>()
        let events = events
        let work = Task { [self] in
            let outcome: DeadlineRace<R.Response>.Outcome
            do {
                outcome = .finished(.success(try await attempts(deadline: deadline, state: state)))
            } catch {
                outcome = .finished(.failure(error))
            }
            // Lost to the deadline: the caller has gone, and the timer held back this call's events until now.
            if !race.decide(outcome) { events?.release() }
        }
        let timer = Task {
            do {
                try await Task.sleep(until: deadline.instant, clock: .continuous)
            } catch {
                return  // cancelled: the work ended first
            }
            // Held back as the deadline wins, under the race's lock: no event of the work comes after its caller's
            // end, and none from before the deadline is lost.
            if race.decide(DeadlineRace<R.Response>.Outcome.timedOut, whenFirst: { events?.abandon() }) {
                work.cancel()
            }
        }
        let outcome = await withTaskCancellationHandler {
            await Self.outcome(of: race, escalating: work)
        } onCancel: {
            work.cancel()
        }
        timer.cancel()
        if case .finished(let result) = outcome {
            return try result.get()
        }
        try Task.checkCancellation()
        let (stage, isQueued, attempt) = state.withLock { ($0.stage, $0.isQueued, $0.attempt) }
        // Queued for attempt 1, nothing was sent; for a later one, an earlier attempt reached the server.
        let queued = attempt <= 1 ? ", and nothing was sent" : " for attempt \(attempt)"
        throw CourierError(
            code: .timedOut,
            stage: stage,
            message: isQueued
                ? "the call passed its deadline of \(timeout) while it waited for one of the client's "
                    + "maxConcurrentRequests slots\(queued)"
                : "the call did not finish within its deadline of \(timeout)"
        )
    }

    /// Waits for `race`, passing an escalation of the waiting task's priority on to `work` (a task awaited from a
    /// higher-priority one, a SwiftUI task the user is waiting for), as a child task would get it. Where the system
    /// cannot (before macOS, iOS, tvOS, watchOS and visionOS 26), `work` keeps the priority it started with.
    private nonisolated(nonsending) static func outcome(
        of race: DeadlineRace<R.Response>, escalating work: Task<Void, Never>
    ) async -> DeadlineRace<R.Response>.Outcome {
        if #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) {
            return await withTaskPriorityEscalationHandler {
                // An escalation before the handler was in place (no higher than the work's priority: no change).
                work.escalatePriority(to: Task.currentPriority)
                return await race.outcome()
            } onPriorityEscalated: { _, priority in
                work.escalatePriority(to: priority)
            }
        }
        return await race.outcome()
    }

    /// The attempt loop: each turn runs adapters, sends and decides; a restart goes round again.
    ///
    /// Its locals are the loop's state, the request as sent and the response head: a call keeps this frame while it
    /// waits for its transport. So the steps around that wait are functions of their own, whose frames exist only
    /// while they run: `prepare` before it, `settle` (body, decisions, parse) after it. Issue #17: with the steps
    /// inlined this frame was 2,992 bytes; now 880, and a call waiting in the transport holds 2 KiB less.
    private nonisolated(nonsending) func attempts(deadline: Moment?, state: CallState)
        async throws -> R.Response
    {
        let plan = try plan()
        var decisions = plan.decisions
        var redirection: Redirection?
        // A linked page on another origin starts as a redirect there would leave it (`withoutCredentials()`).
        var credentialsStripped = !configuration.sendsCredentials
        var attempt = 0
        var restarts = 0
        while true {
            try Task.checkCancellation()
            attempt += 1
            state.withLock { $0.begin(attempt: attempt) }

            // A slot of the client's `maxConcurrentRequests` from before the adapters (so a waiting call is signed
            // when it goes) until the end of the attempt's decisions.
            let slot = plan.limiter == nil ? nil : try await Slot(limiter: plan.limiter, state: state)
            // A step that throws gives the slot back with it (`Slot`'s deinit); the transport's failure gives it back
            // before a retry's back-off, and the decisions' end before the next attempt or the parse.
            let outgoing = try await prepare(
                plan: plan,
                attempt: attempt,
                redirection: redirection,
                stripsCredentials: credentialsStripped,
                state: state
            )
            // A restart comes as a thrown `Restart` (rare: a redirect, a retry, a refresh), so that the value
            // is returned straight through: an optional or enum result would put the response, whatever its type's
            // size, in this frame, and have the frame look up the optional's type (a metadata lookup per call).
            let restart: Restart
            do {
                let sent = try await send(outgoing, plan: plan, attempt: attempt, deadline: deadline, state: state)
                return try await settle(
                    sent, outgoing: outgoing, plan: plan, decisions: decisions, attempt: attempt, restarts: restarts,
                    deadline: deadline, slot: slot, state: state)
            } catch let signal as Restart {
                restart = signal
            } catch let failure as TransferFailure {
                slot?.release()
                restart = try await recover(
                    from: failure.error, outgoing: outgoing, decisions: decisions, attempt: attempt,
                    restarts: restarts, deadline: deadline, state: state)
            }
            if let target = restart.target {
                redirection = target
                credentialsStripped = credentialsStripped || target.stripsCredentials
            }
            restarts += 1
            try checkRestart(restarts, of: outgoing, redirection: redirection)
            decisions = restart.next
        }
    }

    /// The call's ``Plan``. Not inlined: the temporaries of reading the request's properties (specialized for each
    /// request type) stay on the thread's stack, out of `attempts`' async frame.
    @inline(never)
    private func plan() throws -> Plan {
        let (server, base) = try client.server(for: request)
        let streamsParse = request.parser.streamingParser != nil
        let decisions = Self.decisionChain(for: request, client: client)
        return Plan(
            decisions: decisions,
            server: server,
            base: base,
            limit: request.maxResponseBodySize ?? configuration.maxResponseBodySize,
            streamsParse: streamsParse,
            cacheStage: CacheStage(
                client: client, policy: request.cachePolicy, streamsBody: streamsParse,
                // Only the cache asks (the offline fallback); finding it costs a call a malloc (the cast).
                retryPolicy: configuration.cache == nil ? nil : Self.recoveryPolicy(in: decisions)),
            limiter: request.lane == .standard ? client.limiter : nil
        )
    }

    /// The retry policy that answers a transport failure in `decisions`: that of the first decision that handles
    /// them (see `recover`), when it is a ``RetryDecision``.
    private static func recoveryPolicy(in decisions: [any Decision]) -> RetryPolicy? {
        (decisions.first { $0 is any TransportFailureDecision } as? RetryDecision)?.policy
    }

    /// Sends `outgoing` (through the cache stage when the client has one). Its frame, which the call keeps while it
    /// waits, holds little more than the transport's context.
    @inline(never)
    private nonisolated(nonsending) func send(
        _ outgoing: OutgoingRequest,
        plan: Plan,
        attempt: Int,
        deadline: Moment?,
        state: CallState
    ) async throws -> TransportResponse {
        // A call cancelled while its last adapter ran (by its caller, its deadline or `cancelAll`) sends nothing: a
        // transport may not look before it writes.
        try Task.checkCancellation()
        state.withLock { $0.sending() }
        events?.emit(.sent, attempt: attempt)
        let context = transportContext(for: outgoing, plan: plan, attempt: attempt, deadline: deadline)
        do {
            if plan.cacheStage.isPassThrough {
                return try await client.transport.send(outgoing, context: context)
            }
            return try await plan.cacheStage.send(outgoing, context: context, over: client.transport)
        } catch {
            throw TransferFailure(error: error)
        }
    }

    /// The rest of an attempt once the head is in: the body (unless the parser streams it), the decisions, the
    /// parse. Gives `slot` back when the decisions end. The body's failure is a ``TransferFailure``, which the retry
    /// policy may recover from.
    ///
    /// - Returns: The call's value.
    /// - Throws: ``Restart`` when a decision restarts the call; a ``TransferFailure`` when the body cannot be read.
    @inline(never)
    private nonisolated(nonsending) func settle(
        _ sent: TransportResponse,
        outgoing: OutgoingRequest,
        plan: Plan,
        decisions: [any Decision],
        attempt: Int,
        restarts: Int,
        deadline: Moment?,
        slot: Slot?,
        state: CallState
    ) async throws -> R.Response {
        let sent = observe(sent, attempt: attempt, state: state)
        // The body is read here unless the parser streams it; failing to read it is the transfer's failure.
        let streamsBody = plan.streamsParse && sent.head.status.kind == .successful
        var body = Data()
        // The failure to read the body of a response that is not a success, when the decisions may still act on its
        // status: a 503 whose page is over the limit or cut short is still a 503 (with its `Retry-After`), a 303
        // still a redirect, a 404 still `unacceptableStatus` under a status check. As a transfer failure, the status
        // was lost. When no decision acts on it, the failure is the call's, as before: never an empty success.
        var unread: (any Error)?
        if !streamsBody {
            body = try await Self.readBody(of: sent, for: outgoing.head.method, limit: plan.limit, unread: &unread)
        }
        var received = receivedResponse(
            sent, body: body, streamsBody: streamsBody, cacheStage: plan.cacheStage, attempt: attempt, state: state)
        try Task.checkCancellation()

        state.withLock { $0.stage = .decide }
        let verdict = try await decide(
            &received, outgoing: outgoing, decisions: decisions, attempt: attempt, restarts: restarts,
            deadline: deadline, slot: slot, state: state)
        // The attempt's slot ends with its decisions: a refresh they started is in flight before the next waiting
        // call is signed (so that call waits for the new token instead of carrying the rejected one). A body the
        // parser streams within the call (a download) keeps it until it is read, as its connection stays busy; a
        // live response's body is read after the call, by the caller.
        try Self.restartIfAsked(by: verdict, slot: slot)
        if let unread { throw TransferFailure(error: unread) }
        if !streamsBody || Self.isLive { slot?.release() }
        return try await parse(
            received, sent: sent, streamsBody: streamsBody, streamsParse: plan.streamsParse, outgoing: outgoing,
            attempt: attempt, state: state)
    }

    /// Throws the ``Restart`` `verdict` asks for, after giving `slot` back. Synchronous and not inlined: the restart's
    /// decisions and target stay out of `settle`'s frame (800 bytes with them, 704 without).
    @inline(never)
    private static func restartIfAsked(by verdict: DecisionAction?, slot: Slot?) throws {
        guard case .restart(let next, let target) = verdict else { return }
        slot?.release()
        throw Restart(next: next, target: target)
    }

    /// Records the response head and has the body report download progress when the call has a progress handler.
    @inline(never)
    private func observe(_ sent: TransportResponse, attempt: Int, state: CallState) -> TransportResponse {
        state.withLock {
            $0.response = sent.head
            $0.negotiatedProtocol = sent.negotiatedProtocol
        }
        events?.responseHead(sent.head, attempt: attempt)
        guard let progress else { return sent }
        var sent = sent
        let total = sent.body.length.knownCount
        sent.body = sent.body.observing { count in
            progress(TransferProgress(direction: .download, completedBytes: count, totalBytes: total, attempt: attempt))
        }
        return sent
    }

    /// The response as the decisions see it, recorded with what the cache did.
    @inline(never)
    private func receivedResponse(
        _ sent: TransportResponse, body: Data, streamsBody: Bool, cacheStage: CacheStage, attempt: Int,
        state: CallState
    ) -> ReceivedResponse {
        let received = ReceivedResponse(
            head: sent.head, body: body, cacheStatus: cacheStage.status, negotiatedProtocol: sent.negotiatedProtocol)
        cacheStage.report(to: events, attempt: attempt)
        state.withLock {
            if let status = received.cacheStatus {
                $0.trace.record(.cache, "\(status)", .succeeded, attempt: attempt)
            }
            $0.bodySize = streamsBody ? nil : body.count
            $0.body = body
        }
        return received
    }

    /// A failure with no usable response: the first decision that handles transport failures (the retry policy)
    /// may turn it into a restart (to its redirection, when it has one: a fail-over to another host), or into
    /// another error. Not inlined, like `settle`: inlined into `attempts`, its locals would be in the frame a call
    /// keeps while it waits for its answer, and it runs only after the wait, in the task allocator's slabs the
    /// transport freed.
    ///
    /// Returns the restart, which `attempts` then checks like a restart after a response
    /// (``checkRestart(_:of:redirection:)``); throws `error` when nothing restarts the call, or a `.fail` action's error.
    @inline(never)
    private nonisolated(nonsending) func recover(
        from error: any Error,
        outgoing: OutgoingRequest,
        decisions: [any Decision],
        attempt: Int,
        restarts: Int,
        deadline: Moment?,
        state: CallState
    ) async throws -> Restart {
        reportTransferFailure(error, attempt: attempt, state: state)
        guard !(error is CancellationError), !Task.isCancelled,
            let index = decisions.firstIndex(where: { $0 is any TransportFailureDecision }),
            let recovering = decisions[index] as? any TransportFailureDecision
        else { throw error }
        let recoveryContext = decisionContext(
            for: outgoing, attempt: attempt, restarts: restarts, decisions: decisions, index: index,
            deadline: deadline)
        switch try await recovering.recover(from: error, context: recoveryContext) {
        case .restart(let next, let target)?:
            state.withLock { $0.record(.decision, recovering.name, .restarted, attempt: attempt) }
            guard restarts + 1 <= configuration.maxRestarts else { throw error }
            return Restart(next: next, target: target)
        case .fail(let replacement)?:
            state.withLock {
                $0.stage = .decide
                $0.record(.decision, recovering.name, .failed, attempt: attempt)
            }
            throw replacement
        case .continue?, .done?, nil:
            // No response to go on with or to parse: the failure stands.
            throw error
        }
    }

    /// Tells the monitors the attempt failed without a response (``CourierEvent/Kind/transferFailed(error:)``), the
    /// error redacted as the caller would see it. Not inlined: only a failed attempt pays for it, in its own frame.
    @inline(never)
    private func reportTransferFailure(_ error: any Error, attempt: Int, state: CallState) {
        guard !(error is CancellationError) else { return }
        state.withLock { record in
            guard let events = record.events else { return }
            events.emit(
                .transferFailed(error: record.finalize(error, redactor: configuration.redactor)), attempt: attempt)
        }
    }

    /// Throws when a decision's restart cannot happen: past ``Client/Configuration/maxRestarts``, with a one-shot
    /// body to send again, or with a ``CredentialBody`` to send to another origin. Not inlined: its errors stay out of
    /// `attempts`' async frame.
    @inline(never)
    private func checkRestart(_ restarts: Int, of outgoing: OutgoingRequest, redirection: Redirection?) throws {
        guard restarts <= configuration.maxRestarts else {
            throw CourierError(
                code: .tooManyRestarts,
                stage: .decide,
                message: "the decisions restarted the call \(restarts) times (at most \(configuration.maxRestarts))"
            )
        }
        if let redirection, redirection.stripsCredentials, !redirection.dropsBody, outgoing.body != nil,
            request is any CredentialBody
        {
            // The credentials are in the body, which a 307 or 308 re-sends: stripping headers does not protect them.
            throw CourierError(
                code: .insecureRedirect,
                stage: .decide,
                message: "refusing to send \(request.requestName)'s body, which carries credentials, to another "
                    + "origin (\(Redactor.default.displayURL(redirection.url)))"
            )
        }
        if let body = outgoing.body, !body.isReplayable, !(redirection?.dropsBody ?? false) {
            throw CourierError(
                code: .bodyNotReplayable,
                stage: .decide,
                message: "a decision asked to restart, but the request's body is a one-shot stream"
            )
        }
    }

    /// Turns the final response into the request's value with its parser (streaming the body when it was left
    /// unread).
    @inline(never)
    private nonisolated(nonsending) func parse(
        _ received: ReceivedResponse,
        sent: TransportResponse,
        streamsBody: Bool,
        streamsParse: Bool,
        outgoing: OutgoingRequest,
        attempt: Int,
        state: CallState
    ) async throws -> R.Response {
        state.withLock { $0.stage = .parse }
        let value: R.Response
        let parseContext = ParseContext(request: outgoing.head, jsonDecoder: configuration.jsonDecoder)
        do {
            // Asked again rather than kept in the plan: the plan then has no type of the request's in it, and the
            // call looks up no type for it (issue #17).
            if streamsParse, let streamingParser = request.parser.streamingParser {
                let body = streamsBody ? sent.body : MessageBody(received.body)
                value = try await streamingParser.parse(received.head, body: body, context: parseContext)
            } else {
                value = try request.parser.parse(received, context: parseContext)
            }
        } catch {
            state.withLock { $0.record(.parse, "parse", .failed, attempt: attempt) }
            throw error
        }
        state.withLock { $0.record(.parse, "parse", .succeeded, attempt: attempt) }
        return value
    }

    /// The call's decisions: the client's, its retry policy (unless the request states its own retry), the
    /// request's.
    ///
    /// One retry mechanism per call (design §7): a ``RetryDecision`` among the request's decisions, or a
    /// ``Request/retryPolicy`` the request states, replaces the client's policy and any retry decision in the
    /// client's chain (so `.disabled` means no retry); otherwise the client's ``Client/Configuration/retryPolicy``
    /// adds one after the client's decisions, unless the client's chain already has one.
    static func decisionChain(for request: R, client: Client) -> [any Decision] {
        let requestDecisions = request.decisions
        // The default array holds no retry decision: most requests keep it, and skip the dynamic casts (issue #17).
        let isDefault = Self.isDefault(requestDecisions)
        var clientDecisions = client.configuration.decisions
        if !isDefault, request is any OwnDecisionChain {
            // Only the client's redirect and retry decisions: the others are written for the client's API.
            return client.decisionsWithRetry.filter { $0 is RedirectDecision || $0 is RetryDecision }
                + requestDecisions
        }
        if !isDefault, requestDecisions.contains(where: { $0 is RetryDecision }) {
            clientDecisions.removeAll { $0 is RetryDecision }
            // A status check among the client's decisions would fail a 503 before the request's retries saw it: they
            // go before that check, in their order, where the client's policy would (`RetryDecision.chain`).
            guard let check = clientDecisions.firstIndex(where: { $0 is any StatusFailureDescribing }) else {
                return clientDecisions + requestDecisions
            }
            clientDecisions.insert(contentsOf: requestDecisions.filter { $0 is RetryDecision }, at: check)
            return clientDecisions + requestDecisions.filter { !($0 is RetryDecision) }
        }
        guard let retryPolicy = request.retryPolicy else {
            // The client's decisions with its own retry policy, built once per client.
            if isDefault { return client.defaultDecisionChain }
            let chain = client.decisionsWithRetry
            return requestDecisions.isEmpty ? chain : chain + requestDecisions
        }
        clientDecisions.removeAll { $0 is RetryDecision }
        guard retryPolicy.maxRetries > 0 else { return clientDecisions + requestDecisions }
        return RetryDecision.chain(clientDecisions, retrying: retryPolicy) + requestDecisions
    }

    /// Whether `decisions` is ``Request/decisions``' default array itself (the same storage, so no comparison of
    /// decisions is needed): most requests keep it, and their chain is then built once per client.
    private static func isDefault(_ decisions: [any Decision]) -> Bool {
        decisions.withUnsafeBufferPointer { mine in
            defaultRequestDecisions.withUnsafeBufferPointer { mine.baseAddress == $0.baseAddress }
        }
    }

    /// Resolve, adapt and validate: the request as it goes on the wire.
    private nonisolated(nonsending) func prepare(
        plan: Plan,
        attempt: Int,
        redirection: Redirection?,
        stripsCredentials: Bool,
        state: CallState
    ) async throws -> OutgoingRequest {
        state.withLock { $0.stage = .resolve }
        var outgoing: OutgoingRequest
        if let redirection {
            outgoing = try RequestResolver.resolve(redirection.url, serverHeadersFrom: plan.server)
            Self.follow(redirection, to: &outgoing, state: state)
        } else {
            outgoing = RequestResolver.resolve(path: request.path, on: plan.base)
        }

        // The record gets the request as adapted so far when an adapter fails or the call is cancelled or times out
        // while one runs; not after each adapter, which would share the head's storage and make the next adapter
        // copy it (issue #17: two allocations and a lock per adapter).
        state.withLock { $0.stage = .adapt }
        let context = adapterContext(server: plan.server, attempt: attempt, stripsCredentials: stripsCredentials)
        // The request's adapters, then the client's, without building a third array. After a redirect, each one
        // sees the request as it will be sent (see `CallRecord.redirect`).
        // An adapter that never waits runs in a synchronous call; only the others are awaited.
        for adapter in request.adapters
        where try !Self.adaptWithoutWaiting(adapter, &outgoing, context: context, state: state) {
            try await adaptWaiting(adapter, &outgoing, context: context, state: state)
        }
        for adapter in configuration.adapters
        where try !Self.adaptWithoutWaiting(adapter, &outgoing, context: context, state: state) {
            try await adaptWaiting(adapter, &outgoing, context: context, state: state)
        }
        if stripsCredentials {
            RequestResolver.stripCredentials(from: &outgoing.head.headerFields, redactor: configuration.redactor)
        }

        state.withLock { $0.stage = .validate }
        try Self.validate(&outgoing, cleartextPolicy: configuration.cleartextPolicy, base: plan.base, state: state)
        state.withLock { $0.request = outgoing.head }
        events?.adapted(outgoing.head, attempt: attempt)
        if let progress, outgoing.body != nil {
            Self.observeUpload(of: &outgoing, attempt: attempt, progress: progress)
        }
        return outgoing
    }

    /// Reports the upload of `outgoing`'s body to `progress`. Not inlined: out of `prepare`'s async frame.
    @inline(never)
    private static func observeUpload(
        of outgoing: inout OutgoingRequest, attempt: Int, progress: @escaping @Sendable (TransferProgress) -> Void
    ) {
        guard let body = outgoing.body else { return }
        let total = body.length.knownCount
        outgoing.body = body.observing { count in
            progress(TransferProgress(direction: .upload, completedBytes: count, totalBytes: total, attempt: attempt))
        }
    }

    /// What the adapters of this attempt know. Not inlined: the temporaries of building it stay out of
    /// ``prepare(plan:attempt:redirection:stripsCredentials:state:)``'s async frame.
    ///
    /// After a redirect to another origin, whose requests go without credentials, a credential the request
    /// requires is no longer required: the adapters then leave it off where its origin is not trusted, instead of
    /// failing the call (a download redirected to a CDN's presigned URL, as curl, OkHttp and browsers follow it).
    @inline(never)
    private func adapterContext(server: Server, attempt: Int, stripsCredentials: Bool) -> AdapterContext {
        AdapterContext(
            attempt: attempt,
            server: server,
            knownServers: client.knownServers,
            authentication: stripsCredentials && request.authentication == .required
                ? .optional : request.authentication,
            jsonEncoder: configuration.jsonEncoder,
            queryEncoder: configuration.queryEncoder,
            formEncoder: configuration.formEncoder,
            logger: configuration.logger,
            callID: events?.callID,
            stream: events?.stream
        )
    }

    /// What the transport needs to know about this attempt. Not inlined, like
    /// ``adapterContext(server:attempt:stripsCredentials:)``.
    @inline(never)
    private func transportContext(
        for outgoing: OutgoingRequest, plan: Plan, attempt: Int, deadline: Moment?
    ) -> TransportContext {
        var context = TransportContext(
            maxResponseBodySize: plan.limit,
            attempt: attempt,
            logger: configuration.logger.logLevel <= .debug
                ? configuration.redactor.scrubbingForTransport(
                    configuration.logger, secrets: configuration.redactor.secrets(of: outgoing.head))
                : configuration.logger,
            tls: plan.server.tls ?? configuration.tls,
            proxy: plan.server.proxy ?? configuration.proxy,
            lane: request.lane
        )
        // A live body may outlast the call's deadline, which bounds the time to its head (`withDeadline`).
        context.deadlineMoment = Self.isLive ? nil : deadline
        return context
    }

    /// ``RequestValidator/validate(_:cleartextPolicy:base:)``; a request it refuses goes into the record, so the error
    /// and the log line name it (redacted). Synchronous and not inlined: nothing of it in `prepare`'s async frame.
    @inline(never)
    private static func validate(
        _ outgoing: inout OutgoingRequest, cleartextPolicy: CleartextPolicy, base: RequestResolver.Base,
        state: CallState
    ) throws {
        do {
            try RequestValidator.validate(&outgoing, cleartextPolicy: cleartextPolicy, base: base)
        } catch {
            state.withLock { $0.request = outgoing.head }
            throw error
        }
    }

    /// Prepares the adapters of an attempt after a redirect: the redirect's method on `outgoing` (resolved for its
    /// URL), and its target in the record, which puts them back after each adapter.
    ///
    /// The request's adapters build the request that was first sent (its method, query and body); the redirect then
    /// decides what goes. So each adapter sees the request as it will be sent, apart from its own change: an adapter
    /// that signs the method, path and body signs the `GET` a 303 made, and one that derives a header from the body
    /// (a digest) finds no body to derive it from.
    @inline(never)
    private static func follow(
        _ redirection: Redirection, to outgoing: inout OutgoingRequest, state: CallState
    ) {
        let head = outgoing.head
        outgoing.head.method = redirection.method
        state.withLock { record in
            // `record.request` is the request the redirect answered, as it was sent (or, on a retry, the attempt
            // before, which went to this same target).
            if redirection.dropsBody || (record.request.map { $0.method != redirection.method } ?? false) {
                record.bodyDropped = true
            }
            record.redirect = RequestResolver.RedirectTarget(method: redirection.method, resolved: head)
        }
    }

    /// Runs one adapter on `outgoing` and records it in the trace; on failure (cancellation included) the record also
    /// gets the request as adapted so far. Only an adapter that never waits (`SynchronousAdapter`) runs here, without
    /// an asynchronous call; returns `false`, having done nothing but check for cancellation, for the others, which
    /// ``adaptWaiting(_:_:context:state:)`` runs.
    private static func adaptWithoutWaiting(
        _ adapter: any RequestAdapter,
        _ outgoing: inout OutgoingRequest,
        context: AdapterContext,
        state: CallState
    ) throws -> Bool {
        try checkCancellation(before: outgoing, state: state)
        let done: Bool
        do {
            // In place: a copy passed by value shares the header storage, which the adapter's first write copies.
            done = try adapter._adaptWithoutWaiting(&outgoing, context: context)
        } catch {
            record(failureOf: adapter, adapting: outgoing, attempt: context.attempt, state: state)
            throw error
        }
        if done { record(successOf: adapter, adapting: &outgoing, attempt: context.attempt, state: state) }
        return done
    }

    /// Runs an adapter that may wait (after ``adaptWithoutWaiting(_:_:context:state:)`` checked for cancellation),
    /// recorded like it.
    private nonisolated(nonsending) func adaptWaiting(
        _ adapter: any RequestAdapter,
        _ outgoing: inout OutgoingRequest,
        context: AdapterContext,
        state: CallState
    ) async throws {
        do {
            try await adapter.adapt(&outgoing, context: context)
        } catch {
            Self.record(failureOf: adapter, adapting: outgoing, attempt: context.attempt, state: state)
            throw error
        }
        Self.record(successOf: adapter, adapting: &outgoing, attempt: context.attempt, state: state)
    }

    /// Throws `CancellationError` before an adapter runs when the call is cancelled, with the request as adapted so
    /// far in the record.
    private static func checkCancellation(before outgoing: OutgoingRequest, state: CallState) throws {
        guard Task.isCancelled else { return }
        let head = outgoing.head
        state.withLock { $0.request = head }
        throw CancellationError()
    }

    /// Records that `adapter` failed on `outgoing`, and the request as adapted so far.
    private static func record(
        failureOf adapter: any RequestAdapter, adapting outgoing: OutgoingRequest, attempt: Int, state: CallState
    ) {
        let head = outgoing.head
        state.withLock { record in
            record.record(.adapter, adapter.name, .failed, attempt: attempt)
            record.request = head
        }
    }

    /// Records that `adapter` shaped `outgoing`, and puts a redirect's target back on it (see `follow`).
    private static func record(
        successOf adapter: any RequestAdapter, adapting outgoing: inout OutgoingRequest, attempt: Int, state: CallState
    ) {
        state.withLock { record in
            record.record(.adapter, adapter.name, .succeeded, attempt: attempt)
            record.redirect?.apply(to: &outgoing, droppingBody: record.bodyDropped)
        }
    }

    /// Runs the decision chain on `received` in order, until one finishes, fails or restarts the call.
    ///
    /// - Returns: `.restart` with the next chain (and a redirection target), or `nil` when `received` is final.
    /// A function of its own: its locals stay out of ``attempts(deadline:state:)``'s async frame, which every call
    /// carries through the transport (issue #17: each KiB of a call's frames is a `malloc`).
    @inline(never)
    private nonisolated(nonsending) func decide(
        _ received: inout ReceivedResponse,
        outgoing: OutgoingRequest,
        decisions: [any Decision],
        attempt: Int,
        restarts: Int,
        deadline: Moment?,
        slot: Slot?,
        state: CallState
    ) async throws -> DecisionAction? {
        var index = 0
        // One context for the whole chain, with its index moved along: building one per decision copied the
        // request head, the chain, the clock and the logger each time (issue #17).
        var decisionContext = decisionContext(
            for: outgoing, attempt: attempt, restarts: restarts, decisions: decisions, index: index,
            deadline: deadline)
        decisionContext.slot = slot
        while index < decisions.count {
            let decision = decisions[index]
            decisionContext.index = index
            guard decision.shouldApply(to: received, context: decisionContext) else {
                index += 1
                continue
            }
            let action: DecisionAction
            do {
                // A decision that never waits decides in a synchronous call.
                if let now = try decision._decideWithoutWaiting(received, context: decisionContext) {
                    action = now
                } else {
                    action = try await decision.decide(received, context: decisionContext)
                }
            } catch {
                state.withLock { $0.record(.decision, decision.name, .failed, attempt: attempt) }
                throw error
            }
            switch action {
            case .continue(let response):
                state.withLock { $0.record(.decision, decision.name, .succeeded, attempt: attempt) }
                received = response
                index += 1
            case .done(let response):
                state.withLock { $0.record(.decision, decision.name, .finished, attempt: attempt) }
                received = response
                return nil
            case .fail(let error):
                if Self.returnsForeignRedirects, decision is RedirectDecision,
                    RedirectDecision.isForeignSchemeRedirect(received.head)
                {
                    // Not an error for this request's caller (``ReturnsForeignRedirects``): the 3xx goes on, as it
                    // came (the error's copy of it is redacted, its `Location` query included).
                    state.withLock { $0.record(.decision, decision.name, .succeeded, attempt: attempt) }
                    index += 1
                    continue
                }
                state.withLock { $0.record(.decision, decision.name, .failed, attempt: attempt) }
                throw error
            case .restart:
                state.withLock { $0.record(.decision, decision.name, .restarted, attempt: attempt) }
                return action
            }
        }
        return nil
    }

    /// What decisions at `index` of `decisions` know about this attempt.
    private func decisionContext(
        for outgoing: OutgoingRequest,
        attempt: Int,
        restarts: Int,
        decisions: [any Decision],
        index: Int,
        deadline: Moment?
    ) -> DecisionContext {
        var context = DecisionContext(
            request: outgoing.head,
            canResendBody: outgoing.body?.isReplayable ?? true,
            attempt: attempt,
            restarts: restarts,
            decisions: decisions,
            index: index,
            clock: configuration.clock,
            jsonDecoder: configuration.jsonDecoder,
            logger: configuration.logger
        )
        context.deadlineMoment = deadline
        context.events = events
        context.maxRestarts = configuration.maxRestarts
        return context
    }

    /// Reads the body into memory within `limit`; HEAD, 1xx, 204 and 304 responses have none.
    ///
    /// A failure to read it is the transfer's (a ``TransferFailure``), unless the decisions may still act on the
    /// response's status (`BodyReader.keepsStatus(of:after:)`): that failure goes into `unread`, and the body is empty.
    /// Here rather than in `settle`: the error's handling made `settle`'s frame larger than the task allocator's slab
    /// (1,328 bytes), which then freed the slabs a call had used and took one of 11 KiB instead (issue #17).
    @inline(never)
    private static nonisolated(nonsending) func readBody(
        of response: TransportResponse,
        for method: HTTPRequest.Method,
        limit: Int,
        unread: inout (any Error)?
    ) async throws -> Data {
        if ResponseFraming.hasNoBody(response.head.status, answering: method) {
            // No body by definition, but the transport's (empty) body is still read to its end: AsyncHTTPClient
            // closes a connection whose response was dropped unread instead of returning it to the pool.
            _ = try? await response.body.collect(upTo: limit)
            return Data()
        }
        do {
            return try await response.body.collect(upTo: limit)
        } catch {
            unread = try unreadFailure(error, head: response.head)
            return Data()
        }
    }

    /// `error`, when the decisions may still act on the status of `head` despite it; otherwise throws it as the
    /// transfer's failure. Synchronous and not inlined: the cast's `CourierError` stays out of `readBody`'s frame
    /// (448 → 240 bytes), which a call holds while its body is read.
    @inline(never)
    private static func unreadFailure(_ error: any Error, head: HTTPResponse) throws -> any Error {
        guard let failure = error as? CourierError, BodyReader.keepsStatus(of: head, after: failure) else {
            throw TransferFailure(error: error)
        }
        return failure
    }
}

/// The end of a call's record, for the pipeline and for a live body's lease: not generic, so that a lease calls it
/// without a closure over the pipeline's type.
enum CallClosing {
    /// Closes the call's record, at the end of the call or of its live body: the log line, and the `finished` event,
    /// or for `error` the `failed` event with the error as the caller gets it (returned).
    ///
    /// A success copies the record only for a log line the logger writes (issue #17); a failure copies it once, to
    /// finalize its error.
    static func close(
        _ state: CallState, start: Moment, error: (any Error)?, client: Client
    ) -> (any Error)? {
        guard let error else {
            log(state.withLock { $0 }, start: start, error: nil, client: client)
            state.withLock { $0.emitFinished() }
            return nil
        }
        let record = state.withLock { $0 }
        let finalized = record.finalize(error, redactor: client.configuration.redactor)
        log(record, start: start, error: finalized, client: client)
        record.emitFailed(finalized)
        return finalized
    }

    /// Writes the call's log line. Reads the configuration field by field through `client`: a configuration passed
    /// as an argument was copied whole (and destroyed) for every call, logged or not (issue #17's profile). Takes the
    /// record only when the logger writes the line.
    private static func log(
        _ record: @autoclosure () -> CallRecord, start: Moment, error: (any Error)?, client: Client
    ) {
        let level = error == nil ? client.configuration.callLogLevel : client.configuration.failureLogLevel
        guard client.configuration.logger.logLevel <= level else { return }
        let logger = client.configuration.logger
        let line = RequestLogLine(
            record: record(),
            elapsed: Moment.now - start,
            redactor: client.configuration.redactor,
            error: error
        )
        logger.log(level: level, "\(line)", metadata: line.metadata(withHeaders: logger.logLevel <= .trace))
    }
}

/// What every attempt of a call uses, worked out once before the first (``Pipeline``'s `plan()`). Not nested in the
/// generic `Pipeline`: a nested type is generic too, and every call looked its type up (issue #17).
private struct Plan {
    let decisions: [any Decision]
    let server: Server
    let base: RequestResolver.Base
    let limit: Int
    /// Whether the request's parser streams the body (``ResponseParser/streamingParser``).
    let streamsParse: Bool
    let cacheStage: CacheStage
    let limiter: ConcurrencyLimiter?
}

/// A decision's restart: the next attempt's decisions, and where a redirection goes. Thrown from `settle` to
/// `attempts` (never further), so that the call's value returns without an optional around it.
private struct Restart: Error {
    let next: [any Decision]
    let target: Redirection?
}

/// A failure of an attempt's transfer itself (the send, or reading the body), which the retry policy may recover
/// from; failures of the decisions and the parser are the call's.
private struct TransferFailure: Error {
    let error: any Error
}

/// One call's slot of a ``ConcurrencyLimiter`` (none when there is no limiter), given back at most once: by
/// ``release()`` (the decisions' end, a transport failure, or a decision that pauses: ``DecisionContext/pause(for:)``),
/// or when the slot is dropped (a step that threw).
///
/// `Sendable` because a decision's context carries it, so that a back-off gives the slot back while it waits.
final class Slot: Sendable {
    private let limiter: LockedBox<ConcurrencyLimiter?>

    /// Waits for a slot of `limiter`; `state` says meanwhile that the call is queued (a deadline that passes then
    /// says so: nothing was sent).
    init(limiter: ConcurrencyLimiter?, state: CallState) async throws {
        if let limiter {
            state.withLock { $0.isQueued = true }
            defer { state.withLock { $0.isQueued = false } }
            try await limiter.acquire()
        }
        self.limiter = LockedBox(limiter)
    }

    func release() {
        let held = limiter.withLock { limiter in
            defer { limiter = nil }
            return limiter
        }
        held?.release()
    }

    deinit { release() }
}

/// A request whose body carries credentials (an OAuth 2 token request: a refresh token, a client secret, a
/// password): a redirect that would re-send the body to another origin (307, 308) fails with
/// ``CourierError/Code/insecureRedirect`` instead, since stripping the credential headers does not protect a body.
package protocol CredentialBody {
    /// The secret values in the body: scrubbed from the call's error (its message, body excerpt and underlying
    /// error) when the server echoes them ("Invalid refresh token: <token>").
    var bodySecrets: [String] { get }
}
