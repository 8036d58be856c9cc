import Courier
import CourierTestServer
import Foundation
import Testing

extension Conformance {
    /// A server that refuses an upload while it is still going out (nginx's `client_max_body_size`, a body over the
    /// embedded server's limit): the caller gets the server's status, not a lost connection.
    @Suite("Conformance: an upload refused before its end", .timeLimit(.minutes(2)))
    struct UploadRefusedConformanceTests {
        @Test(
            "a body over the embedded server's 64 MiB limit: unacceptableStatus 413 each time, not a truncated body",
            arguments: TransportKind.all)
        func overTheEmbeddedLimit(transport: TransportKind) async throws {
            try await withTestServer { server in
                let client = makeClient(transport, server.baseURL)
                let body = Data(count: TestServerRequest.maximumBodySize + 1)
                for _ in 0..<3 {
                    let error = await expectCourierError {
                        try await client.send(HTTPBinCall<Data>(method: .post, path: "/post", body: .bytes(body)))
                    }
                    #expect(error?.code == .unacceptableStatus, "\(String(describing: error))")
                    #expect(error?.response?.status.code == 413)
                }
                // Refused at the head, never retried: one request a call.
                #expect(server.requestCount == 3)
                print("conformance: \(transport.name) · 64 MiB + 1 upload: 413 ×3, \(server.requestCount) requests")
            }
        }

        @Test(
            "nginx's client_max_body_size (1 MiB): a 32 MiB upload is unacceptableStatus 413, over HTTP/1.1 and HTTP/2",
            arguments: [TLSOptions.HTTPVersions.http1Only, .automatic])
        func nginxBodyLimit(versions: TLSOptions.HTTPVersions) async throws {
            // AsyncHTTPClient only: URLSession on Linux cannot trust the lab's CA.
            guard let url = NginxLab.url, let trust = try NginxLab.trust() else {
                try skipCase("nginx 413: \(NginxLab.missingReason)")
            }
            var configuration = Client.Configuration()
            configuration.tls = TLSOptions(trust: trust)
            configuration.tls.httpVersions = versions
            let client = Client(
                server: Server(baseURL: url), transport: TransportKind.asyncHTTPClient.make(),
                configuration: configuration)
            for _ in 0..<3 {
                let error = await expectCourierError {
                    try await client.send(
                        HTTPBinCall<Data>(method: .post, path: "/post", body: .bytes(Data(count: 32 << 20))))
                }
                #expect(error?.code == .unacceptableStatus, "\(String(describing: error))")
                #expect(error?.response?.status.code == 413)
                #expect(attempts(error) == 1)
            }
            print("conformance: AsyncHTTPClient · nginx 413 over \(versions): ok ×3")
        }
    }
}
