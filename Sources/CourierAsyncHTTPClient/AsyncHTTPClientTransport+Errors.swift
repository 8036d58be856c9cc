import AsyncHTTPClient
import Courier
import NIOCore
import NIOHTTP1
import NIOHTTPCompression

extension AsyncHTTPClientTransport {
    /// Maps AsyncHTTPClient and NIO errors to ``CourierError`` codes; cancellation stays `CancellationError`.
    static func translate(_ error: any Error, deadlineSet: Bool) -> any Error {
        if error is CancellationError || error is CourierError { return error }
        func fail(_ code: CourierError.Code, _ message: String) -> CourierError {
            CourierError(code: code, stage: .transport, message: message, underlyingError: error)
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .cancelled, .requestStreamCancelled:
                return CancellationError()
            case .connectTimeout:
                return fail(.connectTimeout, "no connection could be made within the connect timeout")
            case .deadlineExceeded:
                return fail(.timedOut, "the call did not finish within its deadline")
            case .readTimeout, .writeTimeout, .tlsHandshakeTimeout, .getConnectionFromPoolTimeout:
                return fail(.timedOut, "the connection timed out (\(error))")
            case .remoteConnectionClosed, .uncleanShutdown:
                return fail(.connectionFailed, "the server closed the connection before the response was complete")
            case .bodyLengthMismatch, .identityCodingIncorrectlyPresent, .contentLengthMissing:
                return fail(.malformedResponse, "the response's framing is invalid (\(error))")
            case .traceRequestWithBody:
                return fail(.invalidBody, "a TRACE request must not have a body")
            default:
                return fail(.transportFailed, "\(error)")
            }
        }
        if let error = error as? NIOHTTPDecompression.DecompressionError {
            return fail(.decompressionLimit, "the compressed body inflates past the decompression limit (\(error))")
        }
        if error is HTTPParserError {
            return fail(.malformedResponse, "the response is not valid HTTP/1.1 (\(error))")
        }
        if let error = error as? IOError {
            return fail(.connectionFailed, "the connection failed: \(error.description)")
        }
        if error is ChannelError {
            return fail(.connectionFailed, "the connection failed: \(error)")
        }
        let name = String(describing: type(of: error))
        if name.contains("NIOConnectionError") || name.contains("ConnectError") {
            return fail(.connectionFailed, "could not connect: \(error)")
        }
        return fail(.transportFailed, "\(error)")
    }
}
