import CourierTestServer
import Foundation

/// The server the clients talk to: the embedded one in this process or in a child process, or an external one.
///
/// Only a child-process server lets client CPU be told apart from server CPU: in this process the server shares
/// NIO's event loops and Swift's cooperative threads with the clients.
///
/// The embedded servers: one plain HTTP server, always, and one TLS server per TLS protocol asked for (see
/// ``WireProtocol``), all presenting certificates from one authority made at start.
final class ServerHost {
    /// One server the clients can reach.
    struct Endpoint: Sendable {
        /// How the clients talk to it.
        let wire: WireProtocol
        /// Its base URL; the clients request `/tiny` under it.
        let baseURL: URL
        /// The PEM of the root certificate the clients trust alone; `nil` for plain HTTP.
        let rootCertificatePEM: String?
    }

    /// The plain HTTP server's base URL; the scale and auth tests use it.
    let baseURL: URL
    /// The servers by protocol: the plain one, and a TLS one per TLS protocol asked for.
    let endpoints: [WireProtocol: Endpoint]
    /// The child process's id when the server runs in one.
    let childPID: Int32?

    /// The plain embedded server when it runs in this process (routes can be added to it).
    let embedded: TestServer?
    private let tlsServers: [TestServer]
    private let child: Process?
    private let childInput: Pipe?

    init(
        endpoints: [WireProtocol: Endpoint],
        baseURL: URL,
        embedded: EmbeddedServers? = nil,
        child: Process? = nil,
        childInput: Pipe? = nil
    ) {
        self.baseURL = baseURL
        self.endpoints = endpoints
        self.embedded = embedded?.plain
        self.tlsServers = embedded.map { Array($0.tls.values) } ?? []
        self.child = child
        self.childInput = childInput
        self.childPID = child?.processIdentifier
    }

    /// Starts (or connects to) the server `mode` describes, with a TLS server for each TLS protocol in `protocols`.
    ///
    /// - Parameters:
    ///   - mode: Where the server runs.
    ///   - protocols: The protocols to serve.
    ///   - serverCPU: The CPU a child-process server pins itself to (`--serve --cpu`); ignored for the others.
    /// - Throws: ``ServerHostError`` when the child process does not report its URLs, or the embedded server's
    ///   error when it cannot bind.
    static func start(
        _ mode: Options.ServerMode,
        protocols: [WireProtocol],
        serverCPU: Int? = nil
    ) async throws -> ServerHost {
        switch mode {
        case .inProcess:
            let servers = try await EmbeddedServers.start(protocols: protocols)
            return ServerHost(endpoints: servers.endpoints, baseURL: servers.plain.baseURL, embedded: servers)
        case .external(let url):
            let endpoint = Endpoint(wire: .http, baseURL: url, rootCertificatePEM: nil)
            return ServerHost(endpoints: [.http: endpoint], baseURL: url)
        case .childProcess:
            return try startChild(protocols: protocols, cpu: serverCPU)
        }
    }

    /// Stops the servers this host started; an external server is left alone.
    func shutdown() async {
        try? await embedded?.shutdown()
        for server in tlsServers {
            try? await server.shutdown()
        }
        if let child {
            try? childInput?.fileHandleForWriting.close()
            child.terminate()
            child.waitUntilExit()
        }
    }

    /// The `--serve` mode: starts the embedded servers, prints their URLs (see ``EmbeddedServers/announcement``),
    /// and serves until killed (or, as a child, until its stdin closes).
    ///
    /// - Parameters:
    ///   - port: The plain server's port; `0` picks a free one. The TLS servers always pick a free one.
    ///   - protocols: The protocols to serve; the plain server runs whatever they are.
    ///   - cpu: The CPU to pin this process to before serving (`--cpu`), if any; when that fails, it says so on
    ///     stderr and serves unpinned (the parent reads the CPUs it may run on and reports them).
    static func serveForever(port: Int, protocols: [WireProtocol], cpu: Int? = nil) async throws -> Never {
        if let cpu {
            do {
                try Affinity.pinProcess(to: cpu)
            } catch {
                FileHandle.standardError.write(
                    Data("courier-loopback --serve: not pinned to CPU \(cpu): \(error)\n".utf8))
            }
        }
        let servers = try await EmbeddedServers.start(protocols: protocols, port: port)
        print(servers.announcement)
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
    /// The child process exited or printed something other than its URLs.
    case childDidNotStart(String)
    /// No server speaks this protocol (an external server speaks only its own).
    case missingEndpoint(WireProtocol)

    var description: String {
        switch self {
        case .childDidNotStart(let output): "the server process did not start; it printed: \(output)"
        case .missingEndpoint(let wire): "no server for \(wire.rawValue): only the embedded servers speak TLS"
        }
    }
}
