import Foundation

/// The single-flight refresh and the ordered store queue.
extension Authenticator {
    /// Starts a refresh of `credential` (the current one; `nil` to acquire a first one) and waits for it, unless
    /// the storm guard forbids it.
    func startRefresh(of credential: Credential?) async throws -> Credential {
        let time = now()
        let interval = Credential.seconds(refreshLimit.interval)
        // A start "in the future" means the wall clock was set back (NTP, a user): forgotten, or it would count for
        // as long as the step (an hour back: every refresh refused for an hour).
        refreshStarts.removeAll {
            let age = time.timeIntervalSince($0)
            return age >= interval || age < 0
        }
        guard refreshStarts.count < refreshLimit.maximumRefreshes else {
            throw CourierError(
                code: .excessiveRefresh,
                stage: .decide,
                message: "\(refreshStarts.count) token refreshes within \(refreshLimit.interval) already; "
                    + "not starting another"
            )
        }
        refreshStarts.append(time)
        lastID += 1
        let id = lastID
        if let previous = flight {
            supersededFlights[previous.id] = previous
        }
        flight = Flight(id: id, version: credential?.version)
        // The task runs on this actor, so it cannot finish the flight before `wait` below has registered:
        // nothing between here and the registration suspends.
        Task { await self.run(flight: id, refreshing: credential) }
        return try await wait(for: id)
    }

    /// Waits for the flight `id` to finish; cancellation ends only this caller's wait.
    func wait(for id: Int) async throws -> Credential {
        lastID += 1
        let waiter = lastID
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Credential, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else if flight?.id == id {
                    flight?.waiters.append((waiter, continuation))
                } else {
                    continuation.resume(throwing: Self.reauthentication("the refresh ended before it could be joined"))
                }
            }
        } onCancel: {
            Task { await self.cancel(waiter: waiter) }
        }
    }

    /// Resumes a cancelled waiter with `CancellationError`, if it is still waiting.
    private func cancel(waiter: Int) {
        if let index = flight?.waiters.firstIndex(where: { $0.id == waiter }),
            let removed = flight?.waiters.remove(at: index)
        {
            removed.continuation.resume(throwing: CancellationError())
            return
        }
        for (id, superseded) in supersededFlights {
            guard let index = superseded.waiters.firstIndex(where: { $0.id == waiter }),
                let removed = supersededFlights[id]?.waiters.remove(at: index)
            else { continue }
            removed.continuation.resume(throwing: CancellationError())
            return
        }
    }

    /// Asks the refresher for `credential`'s successor, or the acquirer for a first credential when there is none.
    private func renew(_ credential: Credential?) async throws -> Credential {
        if let credential {
            return try await refresher.refresh(credential)
        }
        if let acquirer = refresher as? any TokenAcquirer {
            return try await acquirer.acquire()
        }
        throw Self.reauthentication("there is no credential to renew; sign in")
    }

    /// Runs the refresh of flight `id`, saves its result, and resumes every waiter with it, in arrival order.
    private func run(flight id: Int, refreshing credential: Credential?) async {
        let result: Result<Credential, any Error>
        let started = now()
        // A sign-out during an acquisition (no credential before it, none after) is a change too.
        let signOuts = signOutCount
        do {
            let renewed: Credential
            // Another process's renewal is adopted, unless it (nearly) expired since: then it is renewed in turn (its
            // refresh token is the live one) rather than handed out to sign a request that would be rejected. Not
            // "within the refresh window": a provider's 30 s tokens are inside a 60 s window when they arrive, and two
            // processes would renew each other's renewals for good instead of adopting them.
            let stored: Credential? = if let credential { await renewedInStore(credential) } else { nil }
            if let stored, !stored.expires(within: refreshWindow / 4, of: now()) {
                renewed = stored
            } else {
                // The refresher's requests stay out of `cancelAll()`'s reach (see `RequestRegistry.isExempt`).
                renewed = try await RequestRegistry.$isExempt.withValue(true) {
                    try await renew(stored ?? credential)
                }
            }
            result = await adopt(renewed, replacing: credential, signOuts: signOuts, requestedAt: started)
        } catch {
            if let outcome = sessionChanged(since: credential, signOuts: signOuts) {
                // A sign-in or sign-out during the refresh wins over its failure too: the waiters get the new
                // session's credential (or its end), not an error of the session that is gone.
                result = outcome
            } else if let credential, (error as? CourierError)?.code == .reauthenticationRequired,
                let stored = await renewedInStore(credential)
            {
                // Another process sharing the store renewed the same credential while this refresh was in flight
                // (the server rotated the refresh token for it, hence `invalid_grant` here): its renewal is this
                // session's too. Ending the session would sign this process out and clear the store it saved.
                result = await adopt(stored, replacing: credential, signOuts: signOuts, requestedAt: started)
            } else if let outcome = sessionChanged(since: credential, signOuts: signOuts) {
                // A sign-in or sign-out while the store was re-read.
                result = outcome
            } else {
                result = .failure(await classify(error, refreshing: credential))
            }
        }
        let finished: Flight
        if let current = flight, current.id == id {
            finished = current
            flight = nil
        } else if let superseded = supersededFlights.removeValue(forKey: id) {
            finished = superseded
        } else {
            return
        }
        for waiter in finished.waiters {
            waiter.continuation.resume(with: result)
        }
    }

    /// The credential the store holds instead of `credential`, when another process sharing the store (an app
    /// extension, a second command-line tool on the same file) renewed it since this one loaded it: adopted
    /// without a token request. Refreshing with the refresh token this process has would spend a token the
    /// server rotated away (`invalid_grant`, and the session ended for both). `nil` when the store holds
    /// `credential`, nothing, or cannot be read: the refresh goes ahead.
    private func renewedInStore(_ credential: Credential) async -> Credential? {
        guard !storeIsStale, let stored = try? await inStoreOrder({ [store] in try await store.load() }) else {
            return nil
        }
        // Not what this process last read or wrote there (an older credential, when saving a renewal failed).
        guard !Self.sameTokens(stored, credential), !Self.sameTokens(stored, knownStored) else { return nil }
        return stored
    }

    /// Saves `credential`, which the store did not take when it was renewed (``unsaved``); on failure, again in 5
    /// seconds at the earliest. A sign-in, sign-out or another renewal meanwhile makes it moot.
    func saveAgain(_ credential: Credential) async {
        unsaved = (credential.version, now().addingTimeInterval(5))
        do {
            try await inStoreOrder { [store, credential] in try await store.save(credential) }
        } catch {
            return
        }
        guard unsaved?.version == credential.version else { return }
        storeHolds(credential)
    }

    /// Notes that the store holds `credential` now (a save succeeded): it is no longer stale, nor is anything unsaved.
    func storeHolds(_ credential: Credential) {
        knownStored = credential
        storeIsStale = false
        unsaved = nil
    }

    static func sameTokens(_ one: Credential, _ other: Credential?) -> Bool {
        one.accessToken == other?.accessToken && one.refreshToken == other?.refreshToken
    }

    /// Numbers, saves and installs a renewed credential, unless the session changed meanwhile.
    private func adopt(
        _ renewed: Credential, replacing old: Credential?, signOuts: Int, requestedAt: Date
    ) async -> Result<Credential, any Error> {
        // A sign-in or sign-out during the refresh wins: its state stands and the renewed credential is dropped.
        if let outcome = sessionChanged(since: old, signOuts: signOuts) { return outcome }
        latestVersion += 1
        var fresh = renewed
        fresh.version = latestVersion
        var saveFailure: String?
        do {
            try await inStoreOrder { [store, fresh] in try await store.save(fresh) }
            storeHolds(fresh)
        } catch {
            saveFailure = "\(error)"
            // The store holds an older credential now; the next call that uses this one saves it again.
            storeIsStale = true
            unsaved = (fresh.version, now())
        }
        // One that happened during the save queued its store operation after it, so the store agrees with it.
        if let outcome = sessionChanged(since: old, signOuts: signOuts) { return outcome }
        session = .active(fresh)
        renewedLifetime = fresh.expiresAt.map { (fresh.version, $0.timeIntervalSince(requestedAt)) }
        rejectedVersion = nil
        signatures.record(fresh)
        eventSink.yield(.refreshed(version: fresh.version))
        if let saveFailure {
            eventSink.yield(.saveFailed(version: fresh.version, message: saveFailure))
        }
        return .success(fresh)
    }

    /// What waiters get when the session is no longer the one `old` belongs to (`nil`: the signed-out state an
    /// acquisition started from, with `signOuts` sign-outs before it); `nil` when it still is.
    private func sessionChanged(since old: Credential?, signOuts: Int) -> Result<Credential, any Error>? {
        switch (session, old) {
        case (.active(let current), let old?) where current.version == old.version: nil
        case (.signedOut, nil) where signOuts == signOutCount: nil
        case (.active(let current), _): .success(current)
        case (.signedOut, _), (.unloaded, _), (.ended, _):
            .failure(Self.reauthentication("the session ended while the credential was being renewed"))
        }
    }

    /// The error waiters get for a failed refresh; a dead grant also ends the session.
    private func classify(_ error: any Error, refreshing credential: Credential?) async -> any Error {
        guard var failure = error as? CourierError else { return error }
        failure.bodyExcerpt = nil  // a token endpoint's body is never repeated
        guard failure.code == .reauthenticationRequired else {
            return CourierError(
                code: failure.code,
                stage: .decide,
                message: "\(credential == nil ? "obtaining" : "renewing") the credential failed: "
                    + (failure.message ?? "\(failure.code)"),
                underlyingError: failure
            )
        }
        if case .active(let current) = session, current.version == credential?.version {
            session = .ended
            rejectedVersion = nil
            // As a sign-out: an `HTTPCache` following this authenticator drops the ended session's entries.
            signatures.removeAll()
            eventSink.yield(.sessionEnded(.reauthenticationRequired))
            try? await inStoreOrder { [store] in try await store.clear() }
        }
        return Self.reauthentication(
            // The cause as the refresher gave it: a token endpoint's refusal, or no refresh token to send at all.
            "the credential cannot be renewed (\(failure.message ?? "\(failure.code)")); sign in again",
            underlying: failure
        )
    }

    /// Runs `operation` after every store operation started before it: the store sees the session's changes in
    /// the order they happened, even when callers interleave.
    func inStoreOrder<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let previous = storeTail
        let task = Task {
            await previous?.value
            return try await operation()
        }
        storeTail = Task { _ = await task.result }
        return try await task.value
    }
}
