import CourierOpenAPI
import Foundation
import HTTPTypes
import OpenAPIAsyncHTTPClient
@_spi(Generated) import OpenAPIRuntime

/// The response of the download operation was not `200` with a body.
struct UnexpectedDownloadResponse: Error, CustomStringConvertible {
    let status: Int
    var description: String { "expected 200 with a body, got \(status)" }
}

/// What swift-openapi-generator emits for `GET /stream-bytes/{count}` (`application/octet-stream`, body as
/// `HTTPBody`), inlined: `UniversalClient.send` on `transport`, the streamed body written to `destination` chunk by
/// chunk and `fsync`ed, as Courier's `DownloadParser` does.
///
/// - Returns: The bytes written.
func openAPIDownload(
    over transport: any ClientTransport, baseURL: URL, bytes: Int, to destination: URL
) async throws -> Int64 {
    let client = UniversalClient(serverURL: baseURL, transport: transport)
    let body = try await client.send(
        input: bytes,
        forOperation: "downloadBytes",
        serializer: { count in
            let path = try client.converter.renderedPath(template: "/stream-bytes/{}", parameters: [count])
            var request = HTTPRequest(soar_path: path, method: .get)
            request.headerFields[.accept] = "application/octet-stream"
            return (request, nil)
        },
        deserializer: { response, body in
            guard response.status.code == 200, let body else {
                throw UnexpectedDownloadResponse(status: response.status.code)
            }
            return body
        }
    )
    guard FileManager.default.createFile(atPath: destination.path, contents: nil) else {
        throw CocoaError(.fileWriteUnknown)
    }
    let handle = try FileHandle(forWritingTo: destination)
    defer { try? handle.close() }
    var written: Int64 = 0
    for try await chunk in body {
        try chunk.withUnsafeBytes { try handle.write(contentsOf: $0) }
        written += Int64(chunk.count)
    }
    try handle.synchronize()
    return written
}
