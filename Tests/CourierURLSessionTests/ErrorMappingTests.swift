import Courier
import Foundation
import HTTPTypes
import Testing

@testable import CourierURLSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How URLSession's errors become Courier's, for the failures a loopback test cannot provoke (a missing route).
@Suite("URLSessionTransport error mapping")
struct ErrorMappingTests {
    /// A `URLError` as FoundationNetworking reports a libcurl failure: `NSURLErrorUnknown` or another code, with
    /// libcurl's text as its description and its underlying error's.
    static func curlError(_ code: URLError.Code, _ text: String) -> URLError {
        let underlying = NSError(
            domain: NSURLErrorDomain, code: code.rawValue, userInfo: [NSLocalizedDescriptionKey: text])
        return URLError(code, userInfo: [NSUnderlyingErrorKey: underlying, NSLocalizedDescriptionKey: text])
    }

    @Test(
        "libcurl's texts for a failure its code does not name map to the failure itself",
        arguments: [
            (
                URLError.Code.unknown, "Failed to connect to 10.9.9.9 port 80 after 3 ms: No route to host",
                CourierError.Code.networkUnreachable
            ),
            (.unknown, "Failed to connect to 10.9.9.9 port 80 after 0 ms: Network is unreachable", .networkUnreachable),
            (.badServerResponse, "Empty reply from server", .connectionReset),
            (.badServerResponse, "Weird server reply", .malformedResponse),
            (.unknown, "Error while processing content unencoding: invalid block type", .malformedResponse),
        ])
    func libcurlTexts(code: URLError.Code, text: String, expected: CourierError.Code) {
        let mapped = URLSessionTransport.map(Self.curlError(code, text), response: nil, received: 0, expected: nil)
        #expect((mapped as? CourierError)?.code == expected, "\(mapped)")
    }

    #if canImport(FoundationNetworking)
        @Test(
            "a libcurl failure after connecting, reported as cannotConnectToHost (a stale ECONNREFUSED), is not unsent",
            arguments: [false, true])
        func staleRefusal(afterHead: Bool) throws {
            // `localhost` with the server on 127.0.0.1 only: `::1` refused, then the request went out on 127.0.0.1.
            let error = Self.curlError(.cannotConnectToHost, "Recv failure: Connection reset by peer")
            let head = afterHead ? HTTPResponse(status: .ok) : nil
            let mapped = try #require(
                URLSessionTransport.map(error, response: head, received: 9, expected: 100) as? CourierError)
            #expect(mapped.code == (afterHead ? .truncatedResponse : .connectionReset), "\(mapped)")
            #expect(!mapped.isKnownUnsent)
            let refused = Self.curlError(
                .cannotConnectToHost, "Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server")
            let unsent = URLSessionTransport.map(refused, response: nil, received: 0, expected: nil) as? CourierError
            #expect(unsent?.code == .connectionRefused && unsent?.isKnownUnsent == true)
        }
    #endif
}
