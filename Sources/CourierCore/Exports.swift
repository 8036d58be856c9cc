// `import Courier` is enough to write requests: the swift-http-types names Courier's API uses
// (`HTTPRequest.Method`, `HTTPFields`, `HTTPField.Name`, `HTTPResponse.Status`) come with it, as they do with
// Hummingbird.
@_exported public import HTTPTypes
