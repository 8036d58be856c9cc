// readme-view-model:begin
import Courier
import CourierURLSession
import Foundation
import Observation

/// What the screen shows.
public struct User: Decodable, Sendable, Equatable {
    /// The user's ID.
    public let id: Int
    /// The user's name.
    public let name: String

    /// A user with `id` and `name`.
    public init(id: Int, name: String) {
        self.id = id
        self.name = name
    }
}

/// A SwiftUI view model: it loads one user and says what to show (loading, the user, or a sentence for the person
/// holding the phone).
@MainActor @Observable
public final class UserViewModel {
    /// What the view draws.
    public enum State: Equatable {
        case idle
        case loading
        case loaded(User)
        case failed(String)
    }

    /// What the view draws now.
    public private(set) var state: State = .idle
    private let client: Client

    /// An app makes one client and shares it. On Apple platforms `Client(baseURL:)` alone picks URLSession.
    public init(client: Client = Client(server: Server(baseURL: Config.api), transport: URLSessionTransport())) {
        self.client = client
    }

    /// Loads user `id`; call it from `.task { await model.load(id: 42) }`, which cancels it when the view goes.
    public func load(id: Int) async {
        state = .loading
        do {
            state = .loaded(try await client.get("/users/\(id)", as: User.self))
        } catch is CancellationError {
            state = .idle  // the view went away: nothing to show
        } catch {
            state = .failed(error.localizedDescription)  // "The server isn't answering right now…", not a code
        }
    }
}

/// Where the app's API lives.
public enum Config {
    /// The API's base URL.
    public static let api = URL(string: "https://api.example.com")!  // a literal: it parses
}
// readme-view-model:end
