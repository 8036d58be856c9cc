import OpenAPIRuntime
import Testing

/// Checks shared by the embedded server's and httpbin's suites: both echo bodies the same way.
enum Scenarios {
    /// A query, and JSON, form and multipart bodies, echoed as sent.
    static func echoesBodies(_ api: Client) async throws {
        let echo = try await api.getEcho(query: .init(name: "Ada Lovelace & co")).ok.body.json
        #expect(echo.args?.additionalProperties["name"] == "Ada Lovelace & co")

        let json = try await api.postAnything(body: .json(.init(name: "Ada"))).ok.body.json
        #expect(json.json?.name == "Ada")

        let form = try await api.postAnything(body: .urlEncodedForm(.init(name: "Ada Lovelace"))).ok.body.json
        #expect(form.form?.additionalProperties["name"] == "Ada Lovelace")

        let multipart = try await api.postAnything(
            body: .multipartForm([
                .name(.init(payload: .init(body: HTTPBody("Ada")))),
                .file(.init(payload: .init(body: HTTPBody("file contents")), filename: "notes.txt")),
            ])
        ).ok.body.json
        #expect(multipart.form?.additionalProperties["name"] == "Ada")
        #expect(multipart.files?.additionalProperties["file"] == "file contents")
    }

    /// Statuses the document does not list come back as `.undocumented`.
    static func passesUndocumentedStatuses(_ api: Client, _ codes: [Int]) async throws {
        for code in codes {
            let output = try await api.getStatus(path: .init(code: code))
            guard case .undocumented(let status, _) = output else {
                Issue.record("expected undocumented \(code), got \(output)")
                continue
            }
            #expect(status == code)
        }
    }
}
