import Foundation
import HTTPTypes

/// Follows redirects the same way on every transport, with curl's and OkHttp's credential hygiene.
///
/// A client runs it first in its decision chain by default. It follows 301, 302, 303, 307 and 308 responses that
/// carry a `Location`, at most ``maxRedirects`` times per call:
///
/// - 303 becomes GET (HEAD stays HEAD) without a body; 301 and 302 turn a POST into a GET without a body (as
///   browsers do); 307 and 308 keep the method and body.
/// - A body that cannot be sent again (a one-shot stream) is never re-sent: the 3xx itself goes on down the chain.
/// - On any change of scheme, host or port, `Authorization`, `Proxy-Authorization`, `Cookie`, `Cookie2` and every
///   header the client's ``Redactor`` treats as sensitive are stripped, and stay stripped for the rest of the call.
/// - `https` → `http` fails with ``CourierError/Code/insecureRedirect`` unless ``allowsInsecureRedirects``;
///   a `Location` that is not http(s), carries userinfo or cannot be parsed fails with
///   ``CourierError/Code/invalidRedirect``; a relative `Location` is resolved against the current URL
///   (RFC 3986 §5.2, dot segments removed).
/// - A URL visited twice in one call fails with ``CourierError/Code/redirectCycle``; one redirect too many with
///   ``CourierError/Code/redirectLimit``.
public struct RedirectDecision: Decision {
    /// The most redirects one call follows. Default: 10.
    public let maxRedirects: Int
    /// Whether an `https` → `http` redirect is followed (credentials are stripped). Default: `false`.
    public let allowsInsecureRedirects: Bool
    private let visited: [String]

    /// Creates a redirect decision.
    public init(maxRedirects: Int = 10, allowsInsecureRedirects: Bool = false) {
        self.init(maxRedirects: maxRedirects, allowsInsecureRedirects: allowsInsecureRedirects, visited: [])
    }

    private init(maxRedirects: Int, allowsInsecureRedirects: Bool, visited: [String]) {
        self.maxRedirects = maxRedirects
        self.allowsInsecureRedirects = allowsInsecureRedirects
        self.visited = visited
    }

    /// `redirect`.
    public var name: String { "redirect" }

    /// The statuses followed.
    public static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    /// Applies to a redirect status with a `Location`, unless the body would have to be re-sent and cannot be.
    public func shouldApply(to response: ReceivedResponse, context: DecisionContext) -> Bool {
        let code = response.status.code
        guard Self.redirectStatuses.contains(code), response.head.headerFields[.location] != nil else { return false }
        let keepsBody = !Self.dropsBody(status: code, method: context.request.method)
        return !keepsBody || context.canResendBody
    }

    /// Restarts the call towards the `Location`, or fails when the redirect is not allowed.
    public func decide(_ response: ReceivedResponse, context: DecisionContext) async throws -> DecisionAction {
        let request = context.request
        guard let current = request.url, let currentOrigin = Origin(url: current) else {
            return .fail(Self.error(.invalidRedirect, "the redirected request has no URL", response))
        }
        guard let location = response.head.headerFields[.location],
            let target = URL(string: location.trimmingCharacters(in: .whitespaces), relativeTo: current)?.absoluteURL
        else {
            return .fail(Self.error(.invalidRedirect, "the Location header is not a valid URL", response))
        }
        let shown = Self.display(target)
        guard let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let targetOrigin = Origin(url: target)
        else {
            return .fail(Self.error(.invalidRedirect, "redirects go only to http(s), not \(shown)", response))
        }
        guard target.user == nil, target.password == nil else {
            return .fail(Self.error(.invalidRedirect, "the redirect target carries userinfo", response))
        }
        if currentOrigin.scheme == "https", scheme == "http", !allowsInsecureRedirects {
            return .fail(Self.error(.insecureRedirect, "refusing a redirect from https to http (\(shown))", response))
        }
        guard max(0, visited.count - 1) < maxRedirects else {
            return .fail(Self.error(.redirectLimit, "more than \(maxRedirects) redirects (next: \(shown))", response))
        }
        let code = response.status.code
        let dropsBody = Self.dropsBody(status: code, method: request.method)
        let method: HTTPRequest.Method = dropsBody && request.method != .head ? .get : request.method
        let key = "\(method.rawValue) \(Self.withoutFragment(target))"
        let seen = visited.isEmpty ? ["\(request.method.rawValue) \(Self.withoutFragment(current))"] : visited
        guard !seen.contains(key) else {
            return .fail(Self.error(.redirectCycle, "the redirects loop back to \(shown)", response))
        }
        let successor = RedirectDecision(
            maxRedirects: maxRedirects,
            allowsInsecureRedirects: allowsInsecureRedirects,
            visited: seen + [key]
        )
        let redirection = Redirection(
            url: target,
            method: method,
            dropsBody: dropsBody,
            stripsCredentials: targetOrigin != currentOrigin
        )
        return .restart(with: context.decisions(replacingCurrentWith: successor), redirection: redirection)
    }

    static func dropsBody(status: Int, method: HTTPRequest.Method) -> Bool {
        switch status {
        case 303: method != .head
        case 301, 302: method == .post
        default: false
        }
    }

    private static func withoutFragment(_ url: URL) -> String {
        let text = url.absoluteString
        return text.firstIndex(of: "#").map { String(text[..<$0]) } ?? text
    }

    /// `url` for a message: no userinfo, no fragment, query secrets redacted.
    ///
    /// A decision does not know the client's ``Redactor``, so this uses ``Redactor/default``; when the error is
    /// thrown, Courier scrubs the values of the client's own sensitive keys (the `Location` is in the response).
    private static func display(_ url: URL) -> String {
        Redactor.default.displayURL(url)
    }

    private static func error(_ code: CourierError.Code, _ message: String, _ response: ReceivedResponse)
        -> CourierError
    {
        CourierError(code: code, stage: .decide, message: message, response: response.head)
    }
}

extension Decision where Self == RedirectDecision {
    /// Follows redirects (see ``RedirectDecision``).
    public static func redirect(maxRedirects: Int = 10, allowsInsecureRedirects: Bool = false) -> RedirectDecision {
        RedirectDecision(maxRedirects: maxRedirects, allowsInsecureRedirects: allowsInsecureRedirects)
    }
}
