// readme-gateway:begin
import Courier
import Foundation
import Hummingbird

/// The upstream's user, as this server returns it to its own clients.
public struct User: Codable, Sendable, ResponseEncodable {
    /// The user's ID.
    public let id: Int
    /// The user's name.
    public let name: String
}

/// The upstream call, as a Courier request. Both frameworks' `Request` in one file: qualify where they meet.
struct GetUser: Courier.Request {
    typealias Response = User
    let id: Int
    var path: String { "/users/\(id)" }
}

/// A router whose `GET /users/:id` answers from the upstream API at `upstream`: a service token fetched with the
/// OAuth 2.0 client-credentials grant and renewed on a 401 or before it expires, responses cached as the upstream's
/// `Cache-Control` allows, a 503 or a lost connection retried with backoff (Courier's defaults).
public func makeRouter(upstream: URL, clientID: String, clientSecret: String) async throws -> Router<
    BasicRequestContext
> {
    // The first call fetches the token; concurrent calls share that one token request.
    let authenticator = Authenticator(
        refresher: OAuth2ClientCredentialsRefresher(
            client: Client(baseURL: upstream),  // the token endpoint: no authentication of its own
            path: "/oauth/token",
            authentication: .clientSecretBasic(clientID: clientID, clientSecret: clientSecret)
        )
    )

    var configuration = Client.Configuration()
    configuration.cache = .memory(byteLimit: 16 << 20)
    configuration.authenticate(with: authenticator)
    let upstreamAPI = Client(baseURL: upstream, configuration: configuration)

    let router = Router()
    router.get("/users/:id") { (request: Hummingbird.Request, context: BasicRequestContext) -> User in
        let id = try context.parameters.require("id", as: Int.self)
        do {
            return try await upstreamAPI.send(GetUser(id: id))
        } catch let error as CourierError where error.response?.status == .notFound {
            throw HTTPError(.notFound, message: "No user \(id).")
        } catch let error as CourierError {
            context.logger.error("upstream call failed", metadata: ["courier.error": "\(error)"])
            throw HTTPError(.badGateway, message: "The user service is unavailable.")
        }
    }
    return router
}
// readme-gateway:end
