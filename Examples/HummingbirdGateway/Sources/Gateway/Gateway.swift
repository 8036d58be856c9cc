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
    let tokens = Client(baseURL: upstream)  // the token endpoint: no authentication of its own
    let refresher = ClientCredentialsRefresher(client: tokens, clientID: clientID, clientSecret: clientSecret)
    let authenticator = Authenticator(store: InMemoryCredentialStore(), refresher: refresher)
    try await authenticator.signIn(try await refresher.token())

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

/// Fetches a service token with the OAuth 2.0 client-credentials grant (RFC 6749 §4.4), authenticating with HTTP
/// Basic (§2.3.1); a renewal is simply a new grant.
struct ClientCredentialsRefresher: TokenRefresher {
    struct TokenResponse: Decodable, Sendable {
        let accessToken: String
        let expiresIn: Int?
        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case expiresIn = "expires_in"
        }
    }

    struct TokenRequest: Courier.Request {
        typealias Response = TokenResponse
        let basic: String
        var method: HTTPRequest.Method { .post }
        var path: String { "/oauth/token" }
        var authentication: AuthenticationRequirement { .none }
        var headers: RequestHeaders { ["Authorization": "Basic \(basic)"] }
        var body: Courier.RequestBody? { .form(["grant_type": "client_credentials"]) }  // Hummingbird has one too
    }

    let client: Client
    let clientID: String
    let clientSecret: String

    func token() async throws -> Credential {
        let pair = "\(Self.formEncoded(clientID)):\(Self.formEncoded(clientSecret))"
        let token = try await client.send(TokenRequest(basic: Data(pair.utf8).base64EncodedString()))
        return Credential(
            accessToken: token.accessToken,
            expiresAt: token.expiresIn.map { Date(timeIntervalSinceNow: TimeInterval($0)) })
    }

    func refresh(_ credential: Credential) async throws -> Credential { try await token() }

    /// `application/x-www-form-urlencoded`, as RFC 6749 §2.3.1 asks before the Base64.
    static func formEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._*")
        return (text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text).replacingOccurrences(
            of: "%20", with: "+")
    }
}
