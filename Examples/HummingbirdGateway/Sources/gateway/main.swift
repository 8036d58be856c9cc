import Foundation
import Gateway
import Hummingbird

// swift run gateway https://api.example.com CLIENT_ID CLIENT_SECRET, then: curl http://127.0.0.1:8080/users/42
let arguments = CommandLine.arguments
guard arguments.count == 4, let upstream = URL(string: arguments[1]) else {
    print("usage: gateway UPSTREAM_URL CLIENT_ID CLIENT_SECRET")
    exit(2)
}
let router = try await makeRouter(upstream: upstream, clientID: arguments[2], clientSecret: arguments[3])
let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 8080)))
try await app.runService()
