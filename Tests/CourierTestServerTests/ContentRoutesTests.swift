import AsyncHTTPClient
import CourierTestServer
import Foundation
import NIOHTTP1
import NIOHTTPCompression
import Testing

@Suite("content, cache and auth routes", .timeLimit(.minutes(2)))
struct ContentRoutesTests {
    static let decompressing = HTTPClient.Configuration(
        redirectConfiguration: .disallow,
        decompression: .enabled(limit: .ratio(100))
    )

    @Test func gzipAndDeflateDecode() async throws {
        try await withServer(configuration: Self.decompressing) { server, client in
            let gzip = try await client.fetch(server, "/gzip")
            #expect(gzip.headers["Content-Encoding"] == ["gzip"])
            #expect(try gzip.json()["gzipped"] as? Bool == true)
            #expect(try gzip.json().string("method") == "GET")
            let deflate = try await client.fetch(server, "/deflate")
            #expect(try deflate.json()["deflated"] as? Bool == true)
        }
    }

    @Test func cacheAnswers304ToConditionalRequests() async throws {
        try await withServer { server, client in
            let fresh = try await client.fetch(server, "/cache")
            #expect(fresh.status == 200)
            let etag = try #require(fresh.headers["ETag"].first)
            #expect(fresh.headers["Last-Modified"].first?.hasSuffix(" GMT") == true)
            #expect(try await client.fetch(server, "/cache", headers: [("If-None-Match", etag)]).status == 304)
            let since = [("If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT")]
            #expect(try await client.fetch(server, "/cache", headers: since).status == 304)
            let timed = try await client.fetch(server, "/cache/60")
            #expect(timed.headers["Cache-Control"] == ["public, max-age=60"])
        }
    }

    @Test(arguments: [
        ([(String, String)](), 200),
        ([("If-None-Match", "\"abc\"")], 304),
        ([("If-None-Match", "W/\"other\", \"abc\"")], 304),
        ([("If-None-Match", "\"other\"")], 200),
        ([("If-Match", "\"other\"")], 412),
        ([("If-Match", "\"abc\"")], 200),
        ([("If-Match", "*")], 200),
    ])
    func etag(headers: [(String, String)], status: Int) async throws {
        try await withServer { server, client in
            let response = try await client.fetch(server, "/etag/abc", headers: headers)
            #expect(response.status == status)
            if status != 412 {
                #expect(response.headers["ETag"] == ["abc"])
            }
        }
    }

    @Test func basicAndBearerAuth() async throws {
        try await withServer { server, client in
            let missing = try await client.fetch(server, "/basic-auth/user/pass")
            #expect(missing.status == 401)
            #expect(missing.headers["WWW-Authenticate"] == ["Basic realm=\"Fake Realm\""])
            let credentials = Data("user:pass".utf8).base64EncodedString()
            let good = try await client.fetch(
                server, "/basic-auth/user/pass", headers: [("Authorization", "Basic \(credentials)")])
            #expect(good.status == 200)
            #expect(try good.json().string("user") == "user")
            let noToken = try await client.fetch(server, "/bearer")
            #expect(noToken.status == 401)
            #expect(noToken.headers["WWW-Authenticate"] == ["Bearer"])
            let token = try await client.fetch(server, "/bearer", headers: [("Authorization", "Bearer t0k3n")]).json()
            #expect(token["authenticated"] as? Bool == true)
            #expect(token.string("token") == "t0k3n")
        }
    }

    @Test func cookies() async throws {
        try await withServer { server, client in
            let echoed = try await client.fetch(server, "/cookies", headers: [("Cookie", "a=1; b=two")]).json()
            #expect(echoed.object("cookies").string("a") == "1")
            #expect(echoed.object("cookies").string("b") == "two")
            let set = try await client.fetch(server, "/cookies/set?k=v&z=9")
            #expect(set.status == 302)
            #expect(set.headers["Location"] == ["/cookies"])
            #expect(set.headers["Set-Cookie"] == ["k=v; Path=/", "z=9; Path=/"])
        }
    }

    @Test func fixedContent() async throws {
        try await withServer { server, client in
            let json = try await client.fetch(server, "/json").json()
            #expect(json.object("slideshow").string("title") == "Sample Slide Show")
            #expect(try await client.fetch(server, "/html").text.contains("Moby-Dick"))
            #expect(try await client.fetch(server, "/robots.txt").text == "User-agent: *\nDisallow: /deny\n")
            #expect(try await client.fetch(server, "/base64/SFRUUEJJTiBpcyBhd2Vzb21l").text == "HTTPBIN is awesome")
        }
    }

    @Test(arguments: [HTTPMethod.GET, .POST])
    func responseHeadersEchoes(method: HTTPMethod) async throws {
        try await withServer { server, client in
            let response = try await client.fetch(server, "/response-headers?X-Test=1&X-Test=2&Y=z", method: method)
            #expect(response.headers["X-Test"] == ["1", "2"])
            #expect(response.headers["Y"] == ["z"])
            let json = try response.json()
            #expect(json["X-Test"] as? [String] == ["1", "2"])
            #expect(json.string("Content-Length") == String(response.body.count))
        }
    }

    @Test func bytesAreSeededAndRangesHonoured() async throws {
        try await withServer { server, client in
            let first = try await client.fetch(server, "/bytes/1024?seed=7")
            let second = try await client.fetch(server, "/bytes/1024?seed=7")
            #expect(first.body.count == 1024)
            #expect(first.body == second.body)
            #expect(first.headers["Content-Type"] == ["application/octet-stream"])
            let whole = try await client.fetch(server, "/range/30")
            #expect(whole.text == "abcdefghijklmnopqrstuvwxyzabcd")
            let part = try await client.fetch(server, "/range/100", headers: [("Range", "bytes=10-19")])
            #expect(part.status == 206)
            #expect(part.text == "klmnopqrst")
            #expect(part.headers["Content-Range"] == ["bytes 10-19/100"])
            // Another unit is ignored (RFC 9110 §14.2): the whole body, 200. Before: 416.
            let items = try await client.fetch(server, "/range/30", headers: [("Range", "items=0-5")])
            #expect(items.status == 200 && items.body.count == 30)
            let outside = try await client.fetch(server, "/range/100", headers: [("Range", "bytes=200-")])
            #expect(outside.status == 416)
        }
    }

    @Test func dripSpreadsBytes() async throws {
        try await withServer { server, client in
            let response = try await client.fetch(server, "/drip?duration=0.2&numbytes=4&code=201")
            #expect(response.status == 201)
            #expect(response.text == "****")
        }
    }
}
