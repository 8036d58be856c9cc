import Foundation

/// A grouped bar chart of the matrix's median req/s, one group per cell (concurrency × decode), one bar per client,
/// as a self-contained SVG (no fonts or scripts beyond the generic `sans-serif`).
enum Chart {
    /// One color per client, in ``ClientKind/allCases`` order.
    private static let colors = ["#1f6feb", "#8c959f", "#2da44e", "#bbc3cb", "#cf6a13", "#8250df"]

    /// The SVG text for `results`.
    static func svg(_ results: [CellResult], options: Options) -> String {
        var groups: [(label: String, values: [(kind: ClientKind, value: Double)])] = []
        // One protocol only: plain HTTP when measured (the other protocols are in the report's tables).
        let wire = options.protocols.contains(.http) ? .http : options.protocols.first ?? .http
        for concurrency in options.concurrencies {
            for decode in [false, true] {
                let values = options.clients.map { kind in
                    let cells = results.filter {
                        $0.wire == wire && $0.kind == kind && $0.concurrency == concurrency && $0.decode == decode
                    }
                    return (kind: kind, value: Report.median(cells.map(\.requestsPerSecond)))
                }
                groups.append((label: "c=\(concurrency), \(decode ? "JSON decode" : "no decode")", values: values))
            }
        }
        let maximum = groups.flatMap { $0.values.map(\.value) }.filter(\.isFinite).max() ?? 1
        let top = niceCeiling(max(maximum, 1))
        let (width, height) = (860.0, 420.0)
        let (left, right, plotTop, bottom) = (70.0, 20.0, 50.0, 330.0)
        let plotWidth = width - left - right
        let groupWidth = plotWidth / Double(max(groups.count, 1))
        let barWidth = groupWidth * 0.8 / Double(max(options.clients.count, 1))
        let y = { (value: Double) in bottom - (bottom - plotTop) * value / top }

        var parts = [
            ##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(Int(width))" height="\##(Int(height))" "##
                + ##"viewBox="0 0 \##(Int(width)) \##(Int(height))" font-family="sans-serif" font-size="12">"##,
            ##"<rect width="100%" height="100%" fill="#ffffff"/>"##,
            ##"<text x="\##(left)" y="24" font-size="15" font-weight="bold">"##
                + "courier-loopback: median req/s per client (higher is better)</text>",
        ]
        for tick in 0...4 {
            let value = top * Double(tick) / 4
            let position = format(y(value))
            parts.append(
                ##"<line x1="\##(left)" y1="\##(position)" x2="\##(width - right)" y2="\##(position)" "##
                    + ##"stroke="#d0d7de" stroke-width="1"/>"##)
            parts.append(
                ##"<text x="\##(left - 6)" y="\##(position)" text-anchor="end" dominant-baseline="middle">"##
                    + "\(Report.grouped(value))</text>")
        }
        for (index, group) in groups.enumerated() {
            let start = left + Double(index) * groupWidth + groupWidth * 0.1
            for (bar, entry) in group.values.enumerated() where entry.value.isFinite {
                let x = start + Double(bar) * barWidth
                let color = colors[(ClientKind.allCases.firstIndex(of: entry.kind) ?? 0) % colors.count]
                parts.append(
                    ##"<rect x="\##(format(x))" y="\##(format(y(entry.value)))" width="\##(format(barWidth - 2))" "##
                        + ##"height="\##(format(bottom - y(entry.value)))" fill="\##(color)">"##
                        + "<title>\(entry.kind.rawValue): \(Report.grouped(entry.value)) req/s</title></rect>")
            }
            parts.append(
                ##"<text x="\##(format(left + (Double(index) + 0.5) * groupWidth))" y="\##(bottom + 18)" "##
                    + ##"text-anchor="middle">\##(group.label)</text>"##)
        }
        parts.append(
            ##"<line x1="\##(left)" y1="\##(bottom)" x2="\##(width - right)" y2="\##(bottom)" stroke="#57606a"/>"##)
        for (index, kind) in options.clients.enumerated() {
            let x = left + Double(index) * 150
            let color = colors[(ClientKind.allCases.firstIndex(of: kind) ?? 0) % colors.count]
            parts.append(##"<rect x="\##(x)" y="\##(bottom + 40)" width="12" height="12" fill="\##(color)"/>"##)
            parts.append(##"<text x="\##(x + 18)" y="\##(bottom + 50)">\##(kind.rawValue)</text>"##)
        }
        parts.append(
            ##"<text x="\##(left)" y="\##(height - 16)" fill="#57606a">"##
                + "Loopback\(Report.showsProtocol(options) ? " (\(wire.rawValue) only)" : ""), embedded server; medians over \(options.rounds) interleaved rounds of "
                + "\(options.seconds) s; AHC pool \(options.connections) connections.</text>")
        parts.append("</svg>")
        return parts.joined(separator: "\n") + "\n"
    }

    /// The smallest 1, 2 or 5 × 10ⁿ at or above `value`.
    private static func niceCeiling(_ value: Double) -> Double {
        let magnitude = pow(10, floor(log10(value)))
        for step in [1.0, 2, 5, 10] where step * magnitude >= value {
            return step * magnitude
        }
        return 10 * magnitude
    }

    private static func format(_ value: Double) -> String {
        String(format: "%.1f", value)
    }
}
