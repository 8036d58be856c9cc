import CourierTestServer
import Foundation

/// The server the clients talk to: the embedded one in this process or in a child process, or an external one.
///
/// Only a child-process server lets client CPU be told apart from server CPU: in this process the server shares
/// NIO's event loops and Swift's cooperative threads with the clients.
final class ServerHost {
    /// The server's base URL; the clients request `/tiny` under it.
    let baseURL: URL
    /// The child process's id when the server runs in one.
    let childPID: Int32?

    /// The embedded server when it runs in this process (routes can be added to it).
    let embedded: TestServer?
    private let child: Process?
    private let childInput: Pipe?

    private init(baseURL: URL, embedded: TestServer? = nil, child: Process? = nil, childInput: Pipe? = nil) {
        self.baseURL = baseURL
        self.embedded = embedded
        self.child = child
        self.childInput = childInput
        self.childPID = child?.processIdentifier
    }

    /// Starts (or connects to) the server `mode` describes.
    ///
    /// - Throws: ``ServerHostError`` when the child process does not report its URL, or the embedded server's
    ///   error when it cannot bind.
    static func start(_ mode: Options.ServerMode) async throws -> ServerHost {
        switch mode {
        case .inProcess:
            let server = try await startEmbeddedServer()
            return ServerHost(baseURL: server.baseURL, embedded: server)
        case .external(let url):
            return ServerHost(baseURL: url)
        case .childProcess:
            return try startChild()
        }
    }

    /// Starts the embedded server with the harness's `/tiny` route added.
    ///
    /// - Parameter port: The port; `0` picks a free one.
    /// - Returns: The running server.
    static func startEmbeddedServer(port: Int = 0) async throws -> TestServer {
        let server = try await TestServer.start(port: port)
        server.register("GET", "/tiny") { _ in .json(TinyPayload.json) }
        return server
    }

    /// The environment variable that tells a `--serve` process to exit when its stdin closes (its parent died).
    static let childMarker = "COURIER_LOOPBACK_CHILD"

    /// Runs this executable with `--serve` and reads the URL it prints.
    private static func startChild() throws -> ServerHost {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments.first ?? "courier-loopback"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--serve"]
        process.environment = ProcessInfo.processInfo.environment.merging([childMarker: "1"]) { _, new in new }
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        var text = ""
        while !text.contains("\n") {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let line = text.split(separator: "\n").first.map(String.init) ?? ""
        guard let url = URL(string: line), url.port != nil else {
            process.terminate()
            throw ServerHostError.childDidNotStart(text)
        }
        return ServerHost(baseURL: url, child: process, childInput: input)
    }

    /// Stops the server this host started; an external server is left alone.
    func shutdown() async {
        try? await embedded?.shutdown()
        if let child {
            try? childInput?.fileHandleForWriting.close()
            child.terminate()
            child.waitUntilExit()
        }
    }

    /// The `--serve` mode: starts the embedded server, prints its URL, and serves until killed (or, as a child,
    /// until its stdin closes).
    ///
    /// - Parameter port: The port; `0` picks a free one.
    static func serveForever(port: Int) async throws -> Never {
        let server = try await startEmbeddedServer(port: port)
        print(server.baseURL.absoluteString)
        fflush(nil)
        if ProcessInfo.processInfo.environment[childMarker] != nil {
            Thread.detachNewThread {
                while !FileHandle.standardInput.availableData.isEmpty {}
                exit(0)
            }
        }
        while true {
            try await Task.sleep(for: .seconds(3600))
        }
    }
}

/// Why the server could not be started.
enum ServerHostError: Error, CustomStringConvertible {
    /// The child process exited or printed something other than its URL.
    case childDidNotStart(String)

    var description: String {
        switch self {
        case .childDidNotStart(let output): "the server process did not start; it printed: \(output)"
        }
    }
}
