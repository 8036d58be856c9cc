import Foundation
import HTTPTypes

/// Reads a `Retry-After` header (RFC 9110 §10.2.3): delay-seconds or an HTTP date.
enum RetryAfter {
    /// The pause the response asks for, or `nil` when it asks for none or the value is not valid.
    ///
    /// An HTTP date is taken relative to the response's own `Date` header when it has one (so a skewed client
    /// clock does not matter), else to `now`. Negative values and garbage are ignored. Several `Retry-After` fields
    /// (a gateway's next to the application's) ask for the longest of their waits: read as one value, `30, 30` was
    /// neither a number nor a date, and the server's wait was lost.
    static func delay(in response: HTTPResponse, now: Date = Date()) -> Duration? {
        let values = response.headerFields[values: .retryAfter]
        guard values.count > 1 else { return values.first.flatMap { delay(value: $0, in: response, now: now) } }
        return values.compactMap { delay(value: $0, in: response, now: now) }.max()
    }

    /// The longest wait Courier reads from a server: about 292 years, so that adding it to a clock's `now` cannot
    /// overflow whatever cap a policy sets.
    private static let longestSeconds = Int64.max / 1_000_000_000

    /// The pause one `Retry-After` value asks for.
    private static func delay(value: String, in response: HTTPResponse, now: Date) -> Duration? {
        let value = value.trimmingCharacters(in: .whitespaces)
        guard !value.isEmpty else { return nil }
        if value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return .seconds(min(Int64(value) ?? longestSeconds, longestSeconds))
        }
        guard let date = parseHTTPDate(value) else { return nil }
        let reference = response.headerFields[.date].flatMap(parseHTTPDate) ?? now
        let interval = date.timeIntervalSince(reference)
        return interval > 0 ? .milliseconds(Int64((interval * 1000).rounded(.up))) : .zero
    }

    /// IMF-fixdate, RFC 850 and asctime dates (RFC 9110 §5.6.7).
    static func parseHTTPDate(_ text: String) -> Date? {
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}
