import Courier
import CourierCore
import CourierOpenAPI
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

/// The generated client on a ``CourierTransport`` over `courier`.
func generatedClient(
    _ courier: CourierCore.Client,
    configuration: CourierTransport.Configuration = .init(),
    middlewares: [any ClientMiddleware] = []
) throws -> Client {
    Client(
        serverURL: try Servers.Server1.url(),
        transport: CourierTransport(client: courier, configuration: configuration),
        middlewares: middlewares
    )
}

/// A count shared with a server route.
final class Counter: Sendable {
    private let value = LockedBox(0)

    /// Adds one; returns the new count.
    @discardableResult
    func increment() -> Int {
        value.withLock { count in
            count += 1
            return count
        }
    }

    var count: Int { value.withLock { $0 } }
}

/// A middleware that records the status of every response it sees, and how often it ran.
final class RecordingMiddleware: ClientMiddleware {
    private let seen = LockedBox<[Int]>([])

    var statuses: [Int] { seen.withLock { $0 } }

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, responseBody) = try await next(request, body, baseURL)
        seen.withLock { $0.append(response.status.code) }
        return (response, responseBody)
    }
}

extension [CourierEvent] {
    /// Whether any event is of the kind `matches` accepts.
    func contains(_ matches: (CourierEvent.Kind) -> Bool) -> Bool { contains { matches($0.kind) } }

    /// The names and outcomes of the decision steps, such as `retry restarted`.
    var decisionSteps: [String] {
        compactMap { event in
            guard case .decision(let step) = event.kind else { return nil }
            return "\(step.name) \(step.outcome)"
        }
    }
}

/// Reads every chunk of `body`; returns the byte count and the number of chunks.
func drain(_ body: HTTPBody) async throws -> (bytes: Int, chunks: Int) {
    var bytes = 0
    var chunks = 0
    for try await chunk in body {
        bytes += chunk.count
        chunks += 1
    }
    return (bytes, chunks)
}
