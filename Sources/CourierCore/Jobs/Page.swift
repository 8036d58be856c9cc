public import Foundation
public import HTTPTypes

/// One page of a paginated response: the parsed value, the response head and where it came from.
///
/// The pages of ``Client/pages(of:next:tags:)`` are `Page` values; a ``NextPage`` strategy reads the value
/// (a next cursor in the body) or the head (a `Link` header) to find the page after it.
public struct Page<R: Request>: Sendable {
    /// The parsed response.
    public var value: R.Response
    /// The response head, with its status and header fields.
    public var response: HTTPResponse
    /// The request whose pages these are (the first request, or the one ``NextPage`` returned for this page).
    public var request: R
    /// The URL this page was read from (after redirects), when it can be built.
    public var url: URL?
    /// The page's position in the sequence, from 1.
    public var number: Int
    /// The URL a `Link` named for this page, when a link led to it: the page as linked, before the client's
    /// adapters added to its query (an `api_key`), so a page that links to itself is seen as the end.
    var linkedURL: URL?

    /// Creates a page (for tests of ``NextPage`` strategies).
    public init(value: R.Response, response: HTTPResponse, request: R, url: URL?, number: Int) {
        self.value = value
        self.response = response
        self.request = request
        self.url = url
        self.number = number
    }
}
