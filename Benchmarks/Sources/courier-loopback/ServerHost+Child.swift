import Foundation

extension ServerHost {
    /// The environment variable that tells a `--serve` process to exit when its stdin closes (its parent died).
    static let childMarker = "COURIER_LOOPBACK_CHILD"

    /// Runs this executable with `--serve` (and `--protocols`) and reads the URLs, and the root to trust, that it
    /// prints (see ``EmbeddedServers/announcement``); with `cpu`, the child pins itself to that CPU (`--cpu`).
    static func startChild(protocols: [WireProtocol], cpu: Int? = nil) throws -> ServerHost {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments.first ?? "courier-loopback"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments =
            ["--serve", "--protocols", protocols.map(\.rawValue).joined(separator: ",")]
            + (cpu.map { ["--cpu", "\($0)"] } ?? [])
        process.environment = ProcessInfo.processInfo.environment.merging([childMarker: "1"]) { _, new in new }
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        var text = ""
        var endpoints: [WireProtocol: Endpoint]?
        while endpoints == nil {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            text += String(decoding: chunk, as: UTF8.self)
            // Only complete lines: a chunk may end in the middle of the root's base64.
            if text.hasSuffix("\n") {
                endpoints = EmbeddedServers.endpoints(announced: text, protocols: protocols)
            }
        }
        guard let endpoints, let plain = endpoints[.http] else {
            process.terminate()
            throw ServerHostError.childDidNotStart(text)
        }
        return ServerHost(endpoints: endpoints, baseURL: plain.baseURL, child: process, childInput: input)
    }
}
