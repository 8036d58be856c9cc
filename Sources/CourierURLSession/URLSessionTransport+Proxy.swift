import CourierCore
import Foundation
import HTTPTypes

extension URLSessionTransport {
    /// The proxies of the process's environment, read once: the ones libcurl follows by itself under
    /// FoundationNetworking.
    static let environmentProxies = ProxyOptions.environment

    /// Refuses, before anything is sent, a call this transport would not route the way `options` say.
    ///
    /// On Linux, FoundationNetworking has no proxy setting (`connectionProxyDictionary` is ignored), while
    /// libcurl underneath follows the process's `http_proxy`, `https_proxy`, `all_proxy` and `no_proxy` on its
    /// own. `ProxyOptions.environment` reads those with curl's rules, so a call is sent when Courier's
    /// choice and libcurl's agree (the environment's proxy, or none), and fails with
    /// `CourierError.Code.unsupported` when they differ: an explicit proxy, or `ProxyOptions.direct`
    /// while the environment names a proxy for the host (which Courier cannot turn off there).
    ///
    /// On Apple platforms URLSession follows the system's proxy settings; with `ProxyOptions.direct` (the
    /// default) the session is left to them, and a proxy chosen by Courier is not mapped onto the session yet, so
    /// such a call fails with `CourierError.Code.unsupported`.
    ///
    /// - Parameter environment: The proxies libcurl follows: the process's (a parameter for tests).
    static func checkProxy(
        _ options: ProxyOptions,
        for head: HTTPRequest,
        environment: ProxyOptions = environmentProxies
    ) throws {
        #if canImport(FoundationNetworking)
            if options.isDirect, environment.isDirect { return }
        #else
            if options.isDirect { return }
        #endif
        guard let url = head.url else { return }
        let wanted = try options.endpoint(for: url)
        #if canImport(FoundationNetworking)
            let followed = Result { () throws(CourierError) in try environment.endpoint(for: url) }
            if case .success(let followed) = followed, followed == wanted { return }
            if wanted != nil {
                throw unsupportedProxy(
                    "a proxy chosen by Courier (FoundationNetworking on Linux has no proxy setting; use "
                        + "AsyncHTTPClientTransport, or ProxyOptions.environment with the proxy in the environment)")
            }
            throw unsupportedProxy(
                "a direct connection: the process's environment routes \(url.scheme ?? "")://\(url.host ?? "") "
                    + "through a proxy, which libcurl follows on its own; set ProxyOptions.environment to accept it, "
                    + "or unset the variable")
        #else
            guard let wanted else { return }
            throw unsupportedProxy("the proxy \(wanted) (not mapped onto URLSession on Apple platforms yet)")
        #endif
    }

    private static func unsupportedProxy(_ what: String) -> CourierError {
        CourierError(
            code: .unsupported, stage: .transport, message: "unsupported: URLSessionTransport cannot honour \(what)")
    }
}
