import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads CPU time and memory of this process (and, on Linux, of another one) from the kernel.
///
/// On Linux the peak RSS can be reset (`/proc/self/clear_refs`), so each cell reports its own peak; elsewhere
/// the peak is the process's lifetime maximum (`getrusage`), and ``canResetPeak`` says so.
enum Probes {
    /// User plus system CPU seconds this process has used so far (`getrusage(RUSAGE_SELF)`).
    static func processCPUSeconds() -> Double {
        guard let usage = selfUsage() else { return 0 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// Context switches this process's threads have made so far, voluntary (a thread waiting: a futex, `epoll_wait`)
    /// plus involuntary (preempted), from `getrusage(RUSAGE_SELF)`. A thread that sleeps and is woken again costs a
    /// system call on each side, so switches per request show how often a call hands work to another thread.
    static func processContextSwitches() -> Int {
        guard let usage = selfUsage() else { return 0 }
        return Int(usage.ru_nvcsw) + Int(usage.ru_nivcsw)
    }

    /// User plus system CPU seconds process `pid` has used so far, from `/proc/<pid>/stat`, in clock ticks
    /// (usually 10 ms); `nil` when it cannot be read (not Linux, or the process is gone).
    static func cpuSeconds(ofProcess pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let closing = stat.lastIndex(of: ")")
        else { return nil }
        // Fields after the command name (which may contain spaces): state is field 3, utime 14, stime 15.
        let fields = stat[stat.index(after: closing)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return ticks > 0 ? (user + system) / ticks : nil
    }

    /// Whether ``resetPeakRSS()`` works here, so that ``peakRSSKiB(ofProcess:)`` is a per-cell peak.
    static let canResetPeak = FileManager.default.isWritableFile(atPath: "/proc/self/clear_refs")

    /// Resets this process's peak RSS (`VmHWM`) to its current RSS; does nothing where that is not possible.
    static func resetPeakRSS() {
        guard canResetPeak, let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return }
        try? handle.write(contentsOf: Data("5".utf8))
        try? handle.close()
    }

    /// The peak RSS in KiB of process `pid` (this process by default) since start or the last reset.
    static func peakRSSKiB(ofProcess pid: Int32? = nil) -> Int {
        if let value = statusField("VmHWM", pid: pid) { return value }
        guard pid == nil else { return 0 }
        guard let usage = selfUsage() else { return 0 }
        #if canImport(Darwin)
            return Int(usage.ru_maxrss) / 1024
        #else
            return Int(usage.ru_maxrss)
        #endif
    }

    /// The current RSS in KiB of this process, or `nil` when `/proc` is not available.
    static func currentRSSKiB() -> Int? {
        statusField("VmRSS", pid: nil)
    }

    /// A `kB` field of `/proc/<pid>/status`.
    private static func statusField(_ name: String, pid: Int32?) -> Int? {
        let path = "/proc/\(pid.map(String.init) ?? "self")/status"
        guard let status = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            return line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) }
        }
        return nil
    }

    /// `getrusage(RUSAGE_SELF)`, or `nil` when it fails.
    private static func selfUsage() -> rusage? {
        var usage = rusage()
        #if canImport(Glibc)
            let who = __rusage_who_t(RUSAGE_SELF.rawValue)
        #else
            let who = RUSAGE_SELF
        #endif
        return getrusage(who, &usage) == 0 ? usage : nil
    }

    private static func seconds(_ time: timeval) -> Double {
        Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }
}
