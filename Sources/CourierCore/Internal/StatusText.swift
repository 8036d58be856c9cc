import HTTPTypes

/// Status lines for messages: the response's own reason phrase, or the standard one when it sent none.
enum StatusText {
    static func describe(_ status: HTTPResponse.Status) -> String {
        let phrase = status.reasonPhrase.isEmpty ? standardPhrase(status.code) : status.reasonPhrase
        return phrase.map { "\(status.code) \($0)" } ?? "\(status.code)"
    }

    static func standardPhrase(_ code: Int) -> String? {
        switch code {
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 418: "I'm a teapot"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: nil
        }
    }
}
