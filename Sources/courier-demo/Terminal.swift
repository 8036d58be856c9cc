import Foundation
import Logging

/// Prints the demo's output: plain lines, and a progress bar that redraws in place on a TTY.
struct Terminal: Sendable {
    let isTTY: Bool

    init() {
        isTTY = isatty(STDOUT_FILENO) == 1
    }

    func line(_ text: String) {
        write(text + "\n")
    }

    /// Writes unbuffered, so lines and progress redraws appear at once and in order.
    func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    func heading(_ text: String) {
        line("")
        line(isTTY ? "\u{1B}[1m\(text)\u{1B}[0m" : text)
    }

    func detail(_ text: String) {
        line(isTTY ? "\u{1B}[2m    \(text)\u{1B}[0m" : "    \(text)")
    }

    /// Draws `fraction` of a bar: in place on a TTY, else one line per 25 %.
    func progress(_ label: String, completed: Int64, total: Int64?, lastPrinted: inout Int) {
        let fraction = total.map { $0 > 0 ? min(1, Double(completed) / Double($0)) : 1 } ?? 0
        let percent = Int(fraction * 100)
        if isTTY {
            let width = 30
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            write("\r    \(label) \(bar) \(percent)% \(completed / 1024) KiB" + (percent == 100 ? "\n" : ""))
        } else if percent >= lastPrinted + 25 || (percent == 100 && lastPrinted < 100) {
            lastPrinted = percent - percent % 25
            line("    \(label) \(percent)% (\(completed) bytes)")
        }
    }

    /// A logger printing Courier's one line per call.
    func logger(verbose: Bool) -> Logger {
        var logger = Logger(label: "courier-demo") { _ in TerminalLogHandler(terminal: self) }
        logger.logLevel = verbose ? .debug : .info
        return logger
    }
}

/// Prints each log message as an indented line.
struct TerminalLogHandler: LogHandler {
    let terminal: Terminal
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        terminal.detail(event.message.description)
    }
}
