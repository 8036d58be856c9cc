import AsyncHTTPClient
import Courier
import CourierOpenAPI
import Foundation
import HTTPTypes
import OpenAPIAsyncHTTPClient
@_spi(Generated) import OpenAPIRuntime

/// swift-openapi-runtime's client path on swift-openapi-async-http-client's transport, or on Courier's
/// `CourierTransport`, driven as the code swift-openapi-generator emits for `GET /tiny` drives it (without running
/// the generator): `UniversalClient`'s
/// `send(input:forOperation:serializer:deserializer:)` with a serializer that renders the path and sets `Accept`,
/// and a deserializer that switches on the status, negotiates the content type and decodes with the runtime's
/// `Converter` (a `JSONDecoder`).
///
/// The `HTTPClient` underneath `openapi-ahc` has the same pool settings as ``RawAHCLoopbackClient``'s, so the pair
/// `openapi-ahc / raw-ahc` measures the runtime's own cost; `openapi-courier` runs the same generated path on
/// `CourierTransport` over Courier's default pipeline on its AsyncHTTPClient transport (the same pool size), so the
/// pair `openapi-courier / openapi-ahc` is what moving a generated client onto Courier costs.
struct OpenAPILoopbackClient: LoopbackClient {
    /// What the generated `Operations.getTiny.Output` would be, reduced to its two cases.
    enum Output: Sendable {
        /// `200`, with the body decoded (the decode cells) or collected as bytes (the no-decode cells).
        case ok(Body)
        /// Any other status, as generated code reports an undocumented response.
        case undocumented(statusCode: Int)
    }

    /// The `200` response's body.
    enum Body: Sendable {
        case json(TinyPayload)
        case binary(HTTPBody)
    }

    /// The generated `AcceptableContentType` of the operation: `application/json` only.
    enum AcceptableContentType: AcceptableProtocol {
        case json
        case other(String)

        init?(rawValue: String) {
            self = rawValue.lowercased() == "application/json" ? .json : .other(rawValue)
        }

        var rawValue: String {
            switch self {
            case .json: "application/json"
            case .other(let string): string
            }
        }

        static var allCases: [Self] { [.json] }
    }

    let client: UniversalClient
    /// Releases the transport's connections.
    let release: @Sendable () async -> Void

    /// On swift-openapi-async-http-client's transport, over an `HTTPClient` with raw AHC's settings.
    init(baseURL: URL, connections: Int, tls: ServerHost.Endpoint.ClientTLS? = nil) {
        let http = RawAHCLoopbackClient.makeHTTPClient(connections: connections, tls: tls)
        self.init(
            baseURL: baseURL,
            transport: OpenAPIAsyncHTTPClient.AsyncHTTPClientTransport(
                configuration: .init(client: http, timeout: .seconds(60))),
            release: { try? await http.shutdown() })
    }

    /// On `CourierTransport` over `courier` (whose transport the caller shuts down, if needed).
    init(baseURL: URL, courier: Client) {
        self.init(baseURL: baseURL, transport: CourierTransport(client: courier), release: {})
    }

    private init(baseURL: URL, transport: any ClientTransport, release: @escaping @Sendable () async -> Void) {
        self.client = UniversalClient(
            serverURL: baseURL, configuration: OpenAPIRuntime.Configuration(), transport: transport)
        self.release = release
    }

    func fetch(decode: Bool) async throws {
        let output = try await send(decode: decode)
        switch output {
        case .ok(.json):
            break
        case .ok(.binary(let body)):
            _ = try await Data(collecting: body, upTo: Client.Configuration.defaultMaxResponseBodySize)
        case .undocumented(let status):
            throw LoopbackError.unexpectedStatus(status)
        }
    }

    /// The generated operation method, inlined.
    private func send(decode: Bool) async throws -> Output {
        try await client.send(
            input: AcceptHeaderContentType<AcceptableContentType>.defaultValues,
            forOperation: "getTiny",
            serializer: { accept in
                let path = try client.converter.renderedPath(template: "/tiny", parameters: [])
                var request = HTTPRequest(soar_path: path, method: .get)
                suppressMutabilityWarning(&request)
                client.converter.setAcceptHeader(in: &request.headerFields, contentTypes: accept)
                return (request, nil)
            },
            deserializer: { response, responseBody in
                switch response.status.code {
                case 200:
                    let contentType = client.converter.extractContentTypeIfPresent(in: response.headerFields)
                    let chosen = try client.converter.bestContentType(
                        received: contentType, options: ["application/json"])
                    guard chosen == "application/json" else { return .undocumented(statusCode: 200) }
                    if decode {
                        return .ok(
                            try await client.converter.getResponseBodyAsJSON(
                                TinyPayload.self, from: responseBody, transforming: { .json($0) }))
                    }
                    return .ok(
                        try client.converter.getResponseBodyAsBinary(
                            HTTPBody.self, from: responseBody, transforming: { .binary($0) }))
                default:
                    return .undocumented(statusCode: response.status.code)
                }
            }
        )
    }

    func shutdown() async {
        await release()
    }
}
