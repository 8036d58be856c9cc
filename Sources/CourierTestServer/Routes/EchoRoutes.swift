#if TestServer
    import Foundation

    /// httpbin's echo routes: `/get`, `/post`, `/put`, `/patch`, `/delete`, `/anything`, `/headers`, `/user-agent`,
    /// `/ip`, `/uuid` and `/delay/{n}`.
    enum EchoRoutes {
        /// The keys of httpbin's `get_dict`.
        enum Field: CaseIterable {
            case url, args, form, data, origin, headers, files, json, method
        }

        static let bodyFields: [Field] = [.url, .args, .form, .data, .origin, .headers, .files, .json]

        static func handle(_ name: Substring, _ context: RouteContext) async throws -> Disposition {
            let method = context.request.method
            switch name {
            case "get":
                guard method == "GET" || method == "HEAD" else { return try await methodNotAllowed(context, "GET") }
                return try await context.json(dictionary(context, [.url, .args, .headers, .origin]))
            case "post", "put", "patch", "delete":
                let expected = name.uppercased()
                guard method == expected else { return try await methodNotAllowed(context, expected) }
                return try await context.json(dictionary(context, bodyFields))
            case "anything":
                return try await context.json(dictionary(context, Field.allCases))
            case "headers":
                return try await context.json(["headers": headers(of: context.request)])
            case "user-agent":
                return try await context.json(["user-agent": .string(context.request.header("User-Agent") ?? "")])
            case "ip":
                return try await context.json(["origin": .string(context.request.remoteAddress)])
            case "uuid":
                return try await context.json(["uuid": .string(UUID().uuidString.lowercased())])
            default:
                let seconds = FaultRoutes.seconds(Double(context.arguments.first ?? ""), fallback: 0, maximum: 10)
                try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                return try await context.json(
                    dictionary(context, [.url, .args, .form, .data, .origin, .headers, .files]))
            }
        }

        /// A `405` naming the allowed method, as Flask sends.
        static func methodNotAllowed(_ context: RouteContext, _ allowed: String) async throws -> Disposition {
            let allow = allowed == "GET" ? "GET, HEAD, OPTIONS" : "\(allowed), OPTIONS"
            return try await context.respond(
                TestServerResponse(
                    status: 405,
                    headers: [("Content-Type", "text/html"), ("Allow", allow)],
                    body: Array("<h1>Method Not Allowed</h1>\n".utf8)
                )
            )
        }

        /// httpbin's `get_dict(*keys)` for this request.
        static func dictionary(_ context: RouteContext, _ fields: [Field]) -> JSONValue {
            let request = context.request
            let body = ParsedBody(request)
            var result: [String: JSONValue] = [:]
            for field in fields {
                switch field {
                case .url: result["url"] = .string(context.url)
                case .args: result["args"] = FormDecoding.semiflatten(request.queryItems)
                case .form: result["form"] = FormDecoding.semiflatten(body.form)
                case .data: result["data"] = .string(body.data)
                case .origin: result["origin"] = .string(request.remoteAddress)
                case .headers: result["headers"] = headers(of: request)
                case .files: result["files"] = FormDecoding.semiflatten(body.files)
                case .json: result["json"] = body.json
                case .method: result["method"] = .string(request.method)
                }
            }
            return .object(result)
        }

        /// Headers as httpbin shows them: title-cased names, repeated fields joined with a comma.
        static func headers(of request: TestServerRequest) -> JSONValue {
            var joined: [String: String] = [:]
            for (name, value) in request.headers {
                let title = name.titleCasedHeaderName
                joined[title] = joined[title].map { "\($0),\(value)" } ?? value
            }
            return .object(joined.mapValues { .string($0) })
        }
    }

    /// A request body split the way werkzeug does: form fields, files, raw data and JSON.
    struct ParsedBody {
        var form: [(name: String, value: String)] = []
        var files: [(name: String, value: String)] = []
        var data = ""
        var json: JSONValue = .null

        init(_ request: TestServerRequest) {
            let contentType = request.header("Content-Type") ?? ""
            if let boundary = MultipartParser.boundary(fromContentType: contentType) {
                for part in MultipartParser.parse(request.body, boundary: boundary) {
                    if part.filename != nil {
                        files.append((part.name, MultipartParser.jsonSafe(part.body, contentType: part.contentType)))
                    } else {
                        form.append((part.name, String(decoding: part.body, as: UTF8.self)))
                    }
                }
            } else if contentType.lowercased().hasPrefix("application/x-www-form-urlencoded") {
                form = FormDecoding.decodeQuery(Substring(String(decoding: request.body, as: UTF8.self)))
            } else {
                data = MultipartParser.jsonSafe(request.body)
                json = JSONValue.parse(request.body) ?? .null
            }
        }
    }
#endif
