// Micro benchmarks (ordo-one package-benchmark, malloc counts from its interposer): one request through Courier's
// full pipeline on `MockTransport` and on a transport that does nothing, and the body encoders.
//
//     cd Benchmarks && swift package --disable-sandbox benchmark
//
// Each iteration is one request (or one encoding), so every metric reads "per request".
import Benchmark
import Courier
import CourierTesting
import Foundation
import HTTPTypes

/// The ~100-byte JSON body the loopback harness serves, decoded the same way.
struct TinyPayload: Decodable, Sendable {
    struct Owner: Decodable, Sendable {
        let login: String
        let id: Int
    }

    static let json =
        #"{"id":42,"name":"courier","active":true,"score":0.75,"tags":["http","swift"],"#
        + #""owner":{"login":"octocat","id":1}}"#

    let id: Int
    let name: String
    let active: Bool
    let score: Double
    let tags: [String]
    let owner: Owner
}

/// `GET /tiny`, decoded as ``TinyPayload``.
struct TinyDecodedRequest: Request {
    typealias Response = TinyPayload
    var path: String { "/tiny" }
}

/// `GET /tiny`, the body returned as `Data`.
struct TinyDataRequest: Request {
    typealias Response = Data
    var path: String { "/tiny" }
}

/// `GET /search?…` with a query of five items, the body returned as `Data`.
struct SearchRequest: Request {
    typealias Response = Data
    var path: String { "/search" }
    var query: Parameters? {
        ["q": "swift http client", "page": 3, "per_page": 50, "sort": "updated", "tags": ["nio", "async"]]
    }
}

/// `POST /upload` with a multipart form: two fields and a 64 KiB file part from memory.
struct MultipartRequest: Request {
    typealias Response = Data
    let form: MultipartFormData
    var method: HTTPRequest.Method { .post }
    var path: String { "/upload" }
    var body: RequestBody? { .multipart(form) }
}

/// A transport that answers every request with the same 200 and ~100-byte JSON body, reading (and dropping) the
/// request body first: the pipeline's own cost, without `MockTransport`'s recording, locking and route matching.
struct FixedTransport: Transport {
    let head = HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"])
    let body = Array(TinyPayload.json.utf8)

    func send(_ request: OutgoingRequest, context: TransportContext) async throws -> TransportResponse {
        if let requestBody = request.body {
            for try await chunk in requestBody { blackHole(chunk.count) }
        }
        return TransportResponse(head: head, body: MessageBody(body))
    }
}

/// A form as a sign-up page would post it: ten fields, a nested object and an array.
struct SignUpForm: Encodable, Sendable {
    struct Address: Encodable, Sendable {
        let street: String
        let city: String
        let postcode: String
    }

    let username = "octocat"
    let email = "octo+cat@example.com"
    let password = "correct horse battery staple"
    let displayName = "The Octocat"
    let age = 12
    let newsletter = true
    let locale = "en-GB"
    let referrer = "https://example.com/?utm_source=bench&utm_medium=test"
    let interests = ["swift", "http/2", "open source"]
    let address = Address(street: "88 Colin P Kelly Jr St", city: "San Francisco", postcode: "94107")
}

let serverURL = URL(string: "https://api.example.com") ?? URL(fileURLWithPath: "/")

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        timeUnits: .microseconds,
        warmupIterations: 100,
        maxDuration: .seconds(2),
        maxIterations: 20_000
    )

    Benchmark("Pipeline GET JSON-decoded (MockTransport)") { benchmark in
        let mock = MockTransport()
        mock.stub(.get, "/tiny") { _ in .json(raw: TinyPayload.json) }
        let client = Client(server: Server(baseURL: serverURL), transport: mock)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await client.send(TinyDecodedRequest()))
        }
    }

    Benchmark("Pipeline GET Data (MockTransport)") { benchmark in
        let mock = MockTransport()
        mock.stub(.get, "/tiny") { _ in .json(raw: TinyPayload.json) }
        let client = Client(server: Server(baseURL: serverURL), transport: mock)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await client.send(TinyDataRequest()))
        }
    }

    Benchmark("Pipeline GET JSON-decoded (FixedTransport)") { benchmark in
        let client = Client(server: Server(baseURL: serverURL), transport: FixedTransport())
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await client.send(TinyDecodedRequest()))
        }
    }

    Benchmark("Pipeline GET Data (FixedTransport)") { benchmark in
        let client = Client(server: Server(baseURL: serverURL), transport: FixedTransport())
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await client.send(TinyDataRequest()))
        }
    }

    Benchmark("Pipeline GET with a 5-item query (FixedTransport)") { benchmark in
        let client = Client(server: Server(baseURL: serverURL), transport: FixedTransport())
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await client.send(SearchRequest()))
        }
    }

    Benchmark("JSONDecoder alone: the tiny body") { benchmark in
        let decoder = JSONDecoder()
        let data = Data(TinyPayload.json.utf8)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try decoder.decode(TinyPayload.self, from: data))
        }
    }

    Benchmark("URLEncodedFormEncoder: 10-field form (≈300 bytes)") { benchmark in
        let encoder = URLEncodedFormEncoder()
        let form = SignUpForm()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try encoder.encode(form))
        }
    }

    Benchmark("URLEncodedFormEncoder: 5-item query (Parameters)") { benchmark in
        let encoder = URLEncodedFormEncoder()
        let query = SearchRequest().query
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try encoder.encode(query))
        }
    }

    // What `RequestBody.multipart` did to each in-memory part, before `ByteSearch`, to check the boundary is absent: the
    // standard library's generic `firstRange(of:)` over the part's bytes. It now scans with `ByteSearch`; this
    // stays as the baseline the multipart benchmark below is read against.
    Benchmark("[UInt8].firstRange(of:) over 64 KiB (the multipart boundary scan before ByteSearch)") { benchmark in
        var generator = SystemRandomNumberGenerator()
        let file = (0..<65_536).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let needle = Array("courier-0123456789abcdef0123456789abcdef".utf8)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(file.firstRange(of: needle))
        }
    }

    Benchmark(
        "Multipart: 2 fields + 64 KiB file, encoded and streamed (FixedTransport)",
        configuration: .init(
            metrics: [.wallClock, .throughput, .mallocCountTotal],
            timeUnits: .microseconds,
            warmupIterations: 20,
            maxDuration: .seconds(2),
            maxIterations: 5_000
        )
    ) { benchmark in
        let client = Client(server: Server(baseURL: serverURL), transport: FixedTransport())
        var generator = SystemRandomNumberGenerator()
        let file = Data((0..<65_536).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let form: MultipartFormData = [
            .field(name: "title", value: "Holiday"),
            .field(name: "description", value: "Photos from the beach, July"),
            .file(name: "photo", filename: "beach.jpg", contentType: "image/jpeg", data: file),
        ]
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await client.send(MultipartRequest(form: form)))
        }
    }
}
