import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One `courier-fleet-worker` process: its stdout as lines, its stdin for `GO`, and SIGKILL.
final class WorkerProcess: Sendable {
    /// What a worker reports on its `RESULT` line.
    struct Result: Decodable, Sendable {
        var ok: Int
        var failed: Int
        var errors: [String: Int]
        var statements: Int
        var elapsedMicroseconds: Int
    }

    let pid: Int32
    /// Every line the worker prints, until it exits.
    let lines: AsyncStream<String>
    private let input: FileHandle

    /// The worker executable, next to this test bundle in the build directory.
    static func executable() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["COURIER_FLEET_WORKER"] { return URL(fileURLWithPath: path) }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("courier-fleet-worker")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        let built = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
                ".build/debug/courier-fleet-worker")
        guard FileManager.default.isExecutableFile(atPath: built.path) else {
            throw WorkerFailure(
                "courier-fleet-worker is not built next to the tests (swift build --build-tests builds it)")
        }
        return built
    }

    /// Starts a worker with `arguments`.
    init(arguments: [String]) throws {
        let process = Process()
        process.executableURL = try Self.executable()
        process.arguments = arguments
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        pid = process.processIdentifier
        self.input = input.fileHandleForWriting
        let reading = output.fileHandleForReading
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        self.lines = lines
        // A thread of its own: `availableData` blocks until the worker writes or exits.
        Thread.detachNewThread {
            var pending = Data()
            while true {
                let chunk = reading.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    continuation.yield(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
            continuation.finish()
            process.waitUntilExit()
        }
    }

    /// Sends `GO`: the worker starts its calls.
    func go() {
        input.write(Data("GO\n".utf8))
    }

    /// Kills the worker with SIGKILL, as a crash would.
    func kill() {
        killProcess(pid)
    }

    deinit {
        killProcess(pid)
    }
}

/// SIGKILL to `pid` (a free function: inside ``WorkerProcess`` `kill` names its method).
private func killProcess(_ pid: Int32) {
    _ = kill(pid, SIGKILL)
}

struct WorkerFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension AsyncStream<String>.Iterator {
    /// The next line that is `expected`, or a failure naming what came instead.
    mutating func expect(_ expected: String) async throws {
        while let line = await next() {
            if line == expected { return }
        }
        throw WorkerFailure("the worker exited before printing \(expected)")
    }
}

/// Parses a worker's `RESULT …` line.
func parseResult(_ line: String) throws -> WorkerProcess.Result {
    try JSONDecoder().decode(WorkerProcess.Result.self, from: Data(line.dropFirst("RESULT ".count).utf8))
}
