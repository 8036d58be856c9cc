import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Pins a process to one CPU with Linux's `sched_setaffinity`, so that the client and a child-process server run on
/// different cores and the client's CPU time is its own.
///
/// Swift's `Glibc` module does not declare `sched_setaffinity` and `sched_getaffinity` (they need `_GNU_SOURCE`),
/// so they are looked up in the C library with `dlsym`. Elsewhere than Linux nothing is pinned and the functions
/// say why.
enum Affinity {
    /// The CPUs this process may run on, ascending (`sched_getaffinity`).
    ///
    /// - Throws: ``AffinityError`` when the mask cannot be read (not Linux, or the call fails).
    static func allowedCPUs() throws -> [Int] {
        #if os(Linux)
            let function = try lookUp("sched_getaffinity")
            var words = [UInt](repeating: 0, count: maskWords)
            let result = words.withUnsafeMutableBytes { function(0, $0.count, $0.baseAddress) }
            guard result == 0 else { throw AffinityError.callFailed("sched_getaffinity", errno) }
            return cpus(in: words)
        #else
            throw AffinityError.unsupported
        #endif
    }

    /// Pins every thread this process has to `cpu` (threads started later inherit the mask from their creator).
    ///
    /// The calling thread first, then every thread listed in `/proc/self/task`, twice, so that a thread started
    /// while the first pass ran is caught too; a thread that exits meanwhile is skipped.
    ///
    /// - Throws: ``AffinityError`` when the calling thread cannot be pinned or is not on `cpu` alone afterwards.
    static func pinProcess(to cpu: Int) throws {
        #if os(Linux)
            guard cpu >= 0, cpu < maskWords * UInt.bitWidth else { throw AffinityError.noSuchCPU(cpu) }
            let function = try lookUp("sched_setaffinity")
            var words = [UInt](repeating: 0, count: maskWords)
            words[cpu / UInt.bitWidth] |= 1 << UInt(cpu % UInt.bitWidth)
            let pin = { (thread: Int32) in words.withUnsafeMutableBytes { function(thread, $0.count, $0.baseAddress) } }
            guard pin(0) == 0 else { throw AffinityError.callFailed("sched_setaffinity", errno) }
            for _ in 0..<2 {
                let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
                for thread in threads.compactMap({ Int32($0) }) {
                    _ = pin(thread)
                }
            }
            let now = try allowedCPUs()
            guard now == [cpu] else { throw AffinityError.notApplied(cpu, now) }
        #else
            throw AffinityError.unsupported
        #endif
    }

    /// The CPUs process `pid` may run on as the kernel lists them (`Cpus_allowed_list` in `/proc/<pid>/status`,
    /// e.g. `1` or `0-1`), this process when `pid` is `nil`; `nil` when it cannot be read.
    static func allowedList(ofProcess pid: Int32? = nil) -> String? {
        let path = "/proc/\(pid.map(String.init) ?? "self")/status"
        guard let status = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("Cpus_allowed_list:") {
            return line.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }

    /// `cpu_set_t` is 1,024 bits on Linux: sixteen 64-bit words.
    private static let maskWords = 1024 / UInt.bitWidth

    /// The CPUs whose bits are set in `words` (bit `n % 64` of word `n / 64`, as `CPU_SET` sets them).
    private static func cpus(in words: [UInt]) -> [Int] {
        var cpus: [Int] = []
        for (index, word) in words.enumerated() where word != 0 {
            for bit in 0..<UInt.bitWidth where word & (1 << UInt(bit)) != 0 {
                cpus.append(index * UInt.bitWidth + bit)
            }
        }
        return cpus
    }

    #if os(Linux)
        /// `int sched_{get,set}affinity(pid_t pid, size_t size, cpu_set_t *mask)`.
        private typealias AffinityFunction = @convention(c) (pid_t, Int, UnsafeMutableRawPointer?) -> Int32

        private static func lookUp(_ name: String) throws -> AffinityFunction {
            guard let symbol = dlsym(nil, name) else { throw AffinityError.missingFunction(name) }
            return unsafeBitCast(symbol, to: AffinityFunction.self)
        }
    #endif
}

/// Why a process could not be pinned.
enum AffinityError: Error, CustomStringConvertible {
    /// Not Linux: there is no `sched_setaffinity`.
    case unsupported
    /// The C library does not export this function.
    case missingFunction(String)
    /// The call failed with this `errno`.
    case callFailed(String, Int32)
    /// The CPU number is outside `cpu_set_t`.
    case noSuchCPU(Int)
    /// The call succeeded but the thread may still run on these CPUs.
    case notApplied(Int, [Int])

    var description: String {
        switch self {
        case .unsupported: "CPU affinity is not supported on this OS (sched_setaffinity is Linux's)"
        case .missingFunction(let name): "\(name) is not in the C library"
        case .callFailed(let name, let code): "\(name) failed: \(String(cString: strerror(code)))"
        case .noSuchCPU(let cpu): "no CPU \(cpu)"
        case .notApplied(let cpu, let now):
            "asked for CPU \(cpu), still allowed on \(now.map(String.init).joined(separator: ","))"
        }
    }
}
