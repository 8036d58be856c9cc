// readme-first-call:begin
import Courier  // the core, and the transport its package traits chose
import Foundation

struct GetIP: Request {
    struct Response: Decodable, Sendable { let origin: String }
    var path: String { "/ip" }
}

func firstCall(_ baseURL: URL) async throws -> String {
    let client = Client(baseURL: baseURL)  // AsyncHTTPClient; URLSession in an app that turns the traits off
    let ip = try await client.send(GetIP())  // a typed value, or one CourierError that says what failed
    let headers = try await client.get("/headers", as: [String: [String: String]].self)  // no type needed
    return "\(ip.origin) \(headers["headers"]?["Host"] ?? "")"
}
// print(try await firstCall(URL(string: "https://httpbin.org")!))
// readme-first-call:end
