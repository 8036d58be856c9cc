extension Client {
    /// Sends `requests` in parallel, at most `maxConcurrent` at a time, and returns their responses in input
    /// order; the first failure cancels the rest.
    ///
    /// Requests start in input order as earlier ones finish. The group is one call for cancellation: cancelling
    /// the calling task, ``cancelAll()`` or ``cancelAll(tagged:)`` with one of `tags` cancels every request in
    /// flight and starts no more.
    ///
    /// ```swift
    /// let users = try await client.sendAll(ids.map { GetUser(id: $0) }, maxConcurrent: 3)
    /// ```
    ///
    /// - Parameters:
    ///   - requests: What to send.
    ///   - maxConcurrent: The most requests in flight at once (at least 1).
    ///   - tags: Labels for ``cancelAll(tagged:)``.
    /// - Returns: One response per request, in the order of `requests`.
    /// - Throws: The first error a request throws (the others are cancelled); `CancellationError` when cancelled.
    public func sendAll<R: Request>(
        _ requests: [R],
        maxConcurrent: Int = 4,
        tags: Set<RequestTag> = []
    ) async throws -> [R.Response] {
        try await registry.run(tags: tags) { [self] in
            try await withThrowingTaskGroup(of: (Int, R.Response).self) { group in
                var responses = [R.Response?](repeating: nil, count: requests.count)
                var next = 0
                while next < requests.count, next < max(1, maxConcurrent) {
                    let index = next
                    group.addTask { (index, try await send(requests[index])) }
                    next += 1
                }
                while let (index, response) = try await group.next() {
                    responses[index] = response
                    if next < requests.count {
                        try Task.checkCancellation()
                        let index = next
                        group.addTask { (index, try await send(requests[index])) }
                        next += 1
                    }
                }
                return responses.compactMap { $0 }
            }
        }
    }

    /// Sends `requests` in parallel, at most `maxConcurrent` at a time, and returns every result in input order,
    /// successes and failures alike.
    ///
    /// A failure does not stop the others. Cancelling the calling task, ``cancelAll()`` or
    /// ``cancelAll(tagged:)`` with one of `tags` cancels the requests in flight; those and the ones not yet
    /// started end as `.failure(CancellationError())`.
    ///
    /// ```swift
    /// for case .failure(let error) in await client.sendAllResults(requests, maxConcurrent: 3) { print(error) }
    /// ```
    ///
    /// - Parameters:
    ///   - requests: What to send.
    ///   - maxConcurrent: The most requests in flight at once (at least 1).
    ///   - tags: Labels for ``cancelAll(tagged:)``.
    /// - Returns: One result per request, in the order of `requests`.
    public func sendAllResults<R: Request>(
        _ requests: [R],
        maxConcurrent: Int = 4,
        tags: Set<RequestTag> = []
    ) async -> [Result<R.Response, any Error>] {
        let results = try? await registry.run(tags: tags) { [self] in
            await withTaskGroup(of: (Int, Result<R.Response, any Error>).self) { group in
                var results = [Result<R.Response, any Error>](
                    repeating: .failure(CancellationError()), count: requests.count)
                var next = 0
                while next < requests.count, next < max(1, maxConcurrent) {
                    let index = next
                    group.addTask { (index, await captureResult { try await send(requests[index]) }) }
                    next += 1
                }
                while let (index, result) = await group.next() {
                    results[index] = result
                    if next < requests.count, !Task.isCancelled {
                        let index = next
                        group.addTask { (index, await captureResult { try await send(requests[index]) }) }
                        next += 1
                    }
                }
                return results
            }
        }
        return results ?? requests.map { _ in .failure(CancellationError()) }
    }
}

/// Runs `body` and captures its value or error.
private func captureResult<Value>(_ body: () async throws -> Value) async -> Result<Value, any Error> {
    do {
        return .success(try await body())
    } catch {
        return .failure(error)
    }
}
