/// A reusable unit of work made of several requests, with a typed result.
///
/// A job's steps are ordinary calls on the client it runs on, so each step can use the results of the ones
/// before it. Run it with ``Client/run(_:tags:)``: cancelling the calling task, the job's tags or the client
/// cancels the step in flight, and the job ends with `CancellationError`.
///
/// ```swift
/// struct LoginJob: Job {
///     let email: String
///     let password: String
///
///     func run(on client: Client) async throws -> Session {
///         let secret = try await client.send(FetchClientSecret(email: email, password: password))
///         let token = try await client.send(FetchToken(secret: secret, email: email, password: password))
///         return Session(clientSecret: secret, accessToken: token)
///     }
/// }
///
/// let session = try await client.run(LoginJob(email: email, password: password))
/// ```
public protocol Job<Output>: Sendable {
    /// What the job produces.
    associatedtype Output: Sendable

    /// Runs the job's steps on `client` and returns their combined result.
    ///
    /// Called by ``Client/run(_:tags:)``, in a task of its own. Check for cancellation between steps that do
    /// not call the client (the client's calls check it themselves).
    ///
    /// - Throws: The first step's error that the job does not handle; `CancellationError` when cancelled.
    func run(on client: Client) async throws -> Output
}

extension Client {
    /// Runs `job` and returns its result.
    ///
    /// The job runs in a task of its own, registered with the client: cancelling the calling task,
    /// ``cancelAll()`` or, when the job has `tags`, ``cancelAll(tagged:)`` cancels it and the step it is on.
    ///
    /// - Parameters:
    ///   - job: The job to run.
    ///   - tags: Labels for ``cancelAll(tagged:)``.
    /// - Returns: The job's ``Job/Output``.
    /// - Throws: Whatever the job throws; `CancellationError` when cancelled.
    public func run<J: Job>(_ job: J, tags: Set<RequestTag> = []) async throws -> J.Output {
        try await registry.run(tags: tags) { [self] in try await job.run(on: self) }
    }

    /// Cancels every call, job, group, page sequence and event stream this client, or a client derived from it with
    /// ``switching(to:)`` or ``configured(_:)``, has in flight.
    ///
    /// Calls started after this returns are not affected. A call counts from the moment the method that starts it
    /// returns (`transfer(_:tags:)` and `send(_:completion:)` included); one cancelled before its task runs throws
    /// `CancellationError` without being sent. Each cancelled call throws `CancellationError`.
    ///
    /// A token refresh in flight is not cancelled: it runs for every call that waits for it, and its response may
    /// hold the only copy of a rotated refresh token. The calls waiting for it are cancelled as usual.
    ///
    /// A call whose response is a ``LiveResponse`` ends when its head arrives: the body is read in the caller's task,
    /// which ends it by cancelling that task. This does not reach a body being read. An event stream
    /// (``events(_:lastEventID:limits:reconnect:tags:)``) is registered for its whole life, and ends with
    /// `CancellationError` whether it is connecting, reading or waiting to reconnect.
    ///
    /// - Returns: How many calls, jobs, groups, page sequences and event streams were cancelled (the calls of a group
    ///   or job that was cancelled stop with it, and are counted only when they were registered with this client
    ///   themselves).
    @discardableResult
    public func cancelAll() -> Int {
        registry.cancel { _ in true }
    }

    /// Cancels every call, job, group, page sequence and event stream in flight that was started with `tag` among its
    /// tags.
    ///
    /// - Returns: How many calls, jobs, groups, page sequences and event streams were cancelled.
    @discardableResult
    public func cancelAll(tagged tag: RequestTag) -> Int {
        registry.cancel { $0.contains(tag) }
    }

    /// The number of calls, jobs and groups this client and the clients derived from it have in flight, and of page
    /// sequences and event streams being iterated.
    public var callsInFlight: Int { registry.count }
}
