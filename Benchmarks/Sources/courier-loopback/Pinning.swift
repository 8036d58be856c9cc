import Foundation

/// Where the client and the child-process server run: on two different CPUs where this process may use two, so
/// that the server never takes the client's core and the client's CPU time is all the client's.
///
/// Made in two steps: ``plan(_:)`` before the server starts (the child pins itself to ``serverCPU`` with `--cpu`),
/// ``apply(childPID:)`` after, which pins this process and reads back what the kernel applied to both.
struct Pinning: Sendable {
    /// The client's CPU, when pinning.
    let clientCPU: Int?
    /// The child-process server's CPU, when pinning.
    let serverCPU: Int?
    /// Why nothing is pinned, when nothing is.
    let reason: String?

    /// Decides the CPUs for `options`, or why not to pin.
    ///
    /// - Throws: ``PinningError`` when `--cpus` names a CPU this process may not run on.
    static func plan(_ options: Options) throws -> Pinning {
        switch options.server {
        case .inProcess where options.authLoad != nil && !options.serverChosen:
            return Pinning(reason: "--auth-load runs the server in this process (it counts the token requests)")
        case .inProcess:
            return Pinning(reason: "the server runs in this process (--server-in-process), on the clients' cores")
        case .external:
            return Pinning(reason: "the server is external (--url); pin it yourself")
        case .childProcess:
            break
        }
        guard options.pins else { return Pinning(reason: "--no-pin") }
        let allowed: [Int]
        do {
            allowed = try Affinity.allowedCPUs()
        } catch {
            return Pinning(reason: "cannot read this process's CPUs: \(error)")
        }
        if let (client, server) = options.cpus {
            guard allowed.contains(client), allowed.contains(server) else {
                throw PinningError.notAllowed(client: client, server: server, allowed: allowed)
            }
            return Pinning(clientCPU: client, serverCPU: server, reason: nil)
        }
        guard allowed.count >= 2 else {
            return Pinning(
                reason: "this process may run on one CPU only (\(allowed.map(String.init).joined(separator: ",")))")
        }
        return Pinning(clientCPU: allowed[0], serverCPU: allowed[1], reason: nil)
    }

    private init(clientCPU: Int? = nil, serverCPU: Int? = nil, reason: String?) {
        self.clientCPU = clientCPU
        self.serverCPU = serverCPU
        self.reason = reason
    }

    /// Pins this process to ``clientCPU`` and says, in one header line, where the client and the server (process
    /// `childPID`) may run now, as the kernel reports it; also written to stderr when the CPUs are not separate.
    func apply(childPID: Int32?) -> String {
        let allowedBefore = Affinity.allowedList() ?? "unknown"
        guard let clientCPU, let serverCPU else {
            let line =
                "pinning: NOT PINNED, \(reason ?? "no CPUs chosen"); client and server may share the CPUs "
                + "(client may run on \(allowedBefore))"
            FileHandle.standardError.write(Data("courier-loopback: \(line)\n".utf8))
            return line
        }
        var failures: [String] = []
        do {
            try Affinity.pinProcess(to: clientCPU)
        } catch {
            failures.append("the client could not be pinned to CPU \(clientCPU): \(error)")
        }
        let client = Affinity.allowedList() ?? "unknown"
        let server = childPID.flatMap { Affinity.allowedList(ofProcess: $0) } ?? "unknown"
        if server != "\(serverCPU)" {
            failures.append("the server was asked for CPU \(serverCPU) but may run on \(server) (see its stderr)")
        }
        guard failures.isEmpty else {
            let line = "pinning: NOT PINNED as asked: " + failures.joined(separator: "; ")
            FileHandle.standardError.write(Data("courier-loopback: \(line)\n".utf8))
            return line
        }
        return "pinning: client on CPU \(client), server (pid \(childPID.map(String.init) ?? "?")) on CPU \(server) "
            + "(sched_setaffinity; this process could run on \(allowedBefore) before)"
    }
}

/// Why the CPUs asked for cannot be used.
enum PinningError: Error, CustomStringConvertible {
    /// `--cpus` named a CPU outside this process's affinity mask.
    case notAllowed(client: Int, server: Int, allowed: [Int])

    var description: String {
        switch self {
        case .notAllowed(let client, let server, let allowed):
            "--cpus \(client),\(server): this process may run on CPUs "
                + "\(allowed.map(String.init).joined(separator: ",")) only"
        }
    }
}
