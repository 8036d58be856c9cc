import Courier
import Foundation
import Testing

// Only `import Courier` (and Foundation) here: the swift-http-types names come with it, and every Courier type can be
// written with the module's name in front, as an app that also imports Vapor, Hummingbird or SwiftUI must.

/// A request written with qualified names only.
private struct QualifiedGetUser: Courier.Request {
    typealias Response = Data
    var method: HTTPRequest.Method { .get }
    var path: String { "/users/42" }
    var headers: Courier.RequestHeaders { ["Accept": "application/json"] }
    var environment: Courier.Server.Environment? { .staging }
}

@Suite("Names that coexist")
struct QualifiedNamesTests {
    @Test("Courier.Request, Courier.Client and Courier.Server.Environment resolve; HTTPTypes comes with Courier")
    func qualifiedNames() throws {
        let staging = Courier.Server(
            baseURL: try #require(URL(string: "https://staging.example.com")), environment: .staging)
        let request = QualifiedGetUser()
        #expect(request.environment == staging.environment)
        let fields: HTTPFields = [.accept: "application/json"]
        #expect(fields[.accept] == "application/json")
        #expect(HTTPResponse.Status.ok.code == 200)
        let client: Courier.Client.Type = Courier.Client.self
        #expect("\(client)" == "Client")
        #expect(UserAgentAdapter.courier.userAgent.hasPrefix("Courier/\(CourierLibrary.version)"))
    }
}
