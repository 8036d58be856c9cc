import Foundation
import Testing

@Suite("README: the view model recipe")
struct ReadmeTests {
    @Test("the README shows the view model exactly as this package compiles it")
    func readmeMatchesSource() throws {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let package = tests.deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(
            contentsOf: package.appendingPathComponent("../../README.md").standardizedFileURL, encoding: .utf8)
        let source = try String(
            contentsOf: package.appendingPathComponent("Sources/AppClient/UserViewModel.swift"), encoding: .utf8)
        let marker = "readme-view-model"
        let shown = try lines(between: "<!-- \(marker):begin -->", and: "<!-- \(marker):end -->", in: readme)
        let compiled = try lines(between: "// \(marker):begin", and: "// \(marker):end", in: source)
        #expect(shown.filter { !$0.hasPrefix("```") } == compiled)
    }

    private func lines(between begin: String, and end: String, in text: String) throws -> [String] {
        let all = text.components(separatedBy: "\n")
        let start = try #require(all.firstIndex { $0.contains(begin) })
        let stop = try #require(all.firstIndex { $0.contains(end) })
        return all[(start + 1)..<stop].filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
    }
}
