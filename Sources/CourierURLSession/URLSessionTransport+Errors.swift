import Courier
import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionTransport {
    /// Maps an error URLSession reported to what Courier throws; the `URLError` stays the underlying error.
    ///
    /// - Parameters:
    ///   - response: The head, if it had arrived: an error after it means the body was cut short.
    ///   - received: Body bytes received so far.
    ///   - expected: The body's length, when known.
    static func map(_ error: any Error, response: HTTPResponse?, received: Int64, expected: Int64?) -> any Error {
        guard let urlError = error as? URLError else {
            return CourierError(code: .transportFailed, stage: .transport, response: response, underlyingError: error)
        }
        func failure(_ code: CourierError.Code, _ message: String) -> CourierError {
            CourierError(code: code, stage: .transport, message: message, response: response, underlyingError: error)
        }
        switch urlError.code {
        case .cancelled:
            return CancellationError()
        case .timedOut:
            return failure(.timedOut, "URLSession timed out")
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet:
            return failure(.connectionFailed, "could not connect (\(urlError.code.rawValue))")
        case .networkConnectionLost, .unknown, .cannotParseResponse, .badServerResponse:
            guard response != nil else {
                return failure(
                    urlError.code == .networkConnectionLost ? .connectionFailed : .transportFailed,
                    "the connection failed before a response (\(urlError.code.rawValue))"
                )
            }
            // FoundationNetworking reports a body shorter than its Content-Length as NSURLErrorUnknown.
            let of = expected.map { " of \($0)" } ?? ""
            return failure(.connectionFailed, "truncated: the body ended after \(received)\(of) bytes")
        default:
            return failure(.transportFailed, "URLSession failed (\(urlError.code.rawValue))")
        }
    }
}
