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
/// - A token request of Courier's OAuth 2 refreshers and acquirers carries its credentials in the body: a 307 or
///   308 that would re-send it to another origin fails with ``CourierError/Code/insecureRedirect``.
/// - `https` → `http` fails with ``CourierError/Code/insecureRedirect`` unless ``allowsInsecureRedirects``;
///   a `Location` that is not http(s), carries userinfo or cannot be parsed fails with
///   ``CourierError/Code/invalidRedirect``; a `Location` is resolved against the current URL as RFC 3986 §5.2 says:
///   an empty one is the current URL, and dot segments are removed from absolute ones too.
/// - A redirect back to the first URL, or to the current one (`Location: #top`), is followed once: servers do that
///   after setting state. A target reached a second time in one call fails with
///   ``CourierError/Code/redirectCycle``; one redirect too many with ``CourierError/Code/redirectLimit``.
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
        // The range first: every redirect status is in it, and most responses are not (no hashing for them).
        guard (301...308).contains(code), Self.redirectStatuses.contains(code),
            response.head.headerFields[.location] != nil
        else { return false }
        let keepsBody = !Self.dropsBody(status: code, method: context.request.method)
        return !keepsBody || context.canResendBody
    }

    /// Restarts the call towards the `Location`, or fails when the redirect is not allowed.
    public func decide(_ response: ReceivedResponse, context: DecisionContext) async throws -> DecisionAction {
        let request = context.request
        guard let current = request.url, let currentOrigin = Origin(url: current) else {
            return .fail(Self.error(.invalidRedirect, "the redirected request has no URL", response))
        }
        // `Location` is a singleton field (RFC 9110 §10.2.2): two different ones leave the target unknown, and
        // HTTPFields would join them with ", " into a URL nobody sent (browsers refuse such a redirect too).
        let locations = response.head.headerFields[values: .location]
        guard locations.dropFirst().allSatisfy({ $0 == locations.first }) else {
            return .fail(
                Self.error(
                    .invalidRedirect, "the response has \(locations.count) different Location fields", response))
        }
        guard let location = locations.first,
            let target = Self.resolve(location, against: current)
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
        guard visited.count < maxRedirects else {
            return .fail(Self.error(.redirectLimit, "more than \(maxRedirects) redirects (next: \(shown))", response))
        }
        let code = response.status.code
        let dropsBody = Self.dropsBody(status: code, method: request.method)
        let method: HTTPRequest.Method = dropsBody && request.method != .head ? .get : request.method
        // A cycle is a target reached a second time. The first request is not a target: a redirect back to it,
        // or to itself, is followed once (servers do that after setting state, such as a cookie).
        let key = "\(method.rawValue) \(Self.withoutFragment(target))"
        guard !visited.contains(key) else {
            return .fail(Self.error(.redirectCycle, "the redirects loop back to \(shown)", response))
        }
        let successor = RedirectDecision(
            maxRedirects: maxRedirects,
            allowsInsecureRedirects: allowsInsecureRedirects,
            visited: visited + [key]
        )
        let redirection = Redirection(
            url: target,
            method: method,
            dropsBody: dropsBody,
            stripsCredentials: targetOrigin != currentOrigin
        )
        return .restart(with: context.decisions(replacingCurrentWith: successor), redirection: redirection)
    }

    /// The absolute URL `location` refers to from `base` (RFC 3986 §5.2), or `nil` when it is not a URL.
    ///
    /// An empty reference is `base` without its fragment (§5.2.2), and the result's path has its dot segments
    /// removed even when `location` is absolute (§5.2.2 applies `remove_dot_segments` to every reference).
    /// Whether `head` is a redirect whose `Location` names another scheme than http(s) (an app's callback,
    /// `myapp://cb?code=…`), which Courier does not follow.
    package static func isForeignSchemeRedirect(_ head: HTTPResponse) -> Bool {
        guard redirectStatuses.contains(head.status.code), let location = head.headerFields[.location],
            let scheme = URL(string: location)?.scheme?.lowercased()
        else { return false }
        return scheme != "http" && scheme != "https"
    }

    static func resolve(_ location: String, against base: URL) -> URL? {
        let reference = location.trimmingCharacters(in: .whitespaces)
        let resolved: URL?
        if reference.isEmpty {
            resolved = URL(string: withoutFragment(base))
        } else {
            resolved = URL(string: reference, relativeTo: base)?.absoluteURL
        }
        guard let resolved, var components = URLComponents(url: resolved, resolvingAgainstBaseURL: false) else {
            return nil
        }
        let path = components.percentEncodedPath
        guard path.contains(".") else { return resolved }
        components.percentEncodedPath = removingDotSegments(path)
        return components.url ?? resolved
    }

    /// RFC 3986 §5.2.4 `remove_dot_segments`.
    static func removingDotSegments(_ path: String) -> String {
        var input = Substring(path)
        var output: [Substring] = []
        while !input.isEmpty {
            if input.hasPrefix("../") {
                input.removeFirst(3)
            } else if input.hasPrefix("./") {
                input.removeFirst(2)
            } else if input.hasPrefix("/./") {
                input.removeFirst(2)
            } else if input == "/." {
                input = "/"
            } else if input.hasPrefix("/../") {
                input.removeFirst(3)
                if !output.isEmpty { output.removeLast() }
            } else if input == "/.." {
                input = "/"
                if !output.isEmpty { output.removeLast() }
            } else if input == "." || input == ".." {
                input = ""
            } else {
                // The first segment, with its leading "/" if any, up to (not including) the next "/".
                let start = input.hasPrefix("/") ? input.index(after: input.startIndex) : input.startIndex
                let end = input[start...].firstIndex(of: "/") ?? input.endIndex
                output.append(input[..<end])
                input = input[end...]
            }
        }
        return output.joined()
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
