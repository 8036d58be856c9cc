import Foundation

/// Parses HTTP dates (RFC 9110 §5.6.7) strictly, without a `DateFormatter` (about 100 µs each on Linux, more than a
/// cache hit): IMF-fixdate and the two obsolete forms recipients must accept, and nothing else. Anything that is not
/// exactly one of them (a missing comma, `UTC` for `GMT`, dashes in an IMF-fixdate, periods in the time, a one-digit
/// hour, several spaces, a lowercase month) is `nil`, which an `Expires` turns into "already expired" (RFC 9111 §5.3).
enum HTTPDateParser {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let longDays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

    /// `date` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), whole seconds, without a `DateFormatter`.
    static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let (wholeDays, time) = seconds.quotientAndRemainder(dividingBy: 86_400)
        let dayNumber = time < 0 ? wholeDays - 1 : wholeDays
        let secondOfDay = time < 0 ? time + 86_400 : time
        // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm); 1970-01-01 was a Thursday.
        let shifted = dayNumber + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let weekday = ((dayNumber % 7) + 7 + 3) % 7  // 0 = Monday
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[weekday]), \(two(day)) \(months[month - 1]) \(year) "
            + "\(two(secondOfDay / 3_600)):\(two(secondOfDay % 3_600 / 60)):\(two(secondOfDay % 60)) GMT"
    }

    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        return fixdate(bytes) ?? rfc850(bytes) ?? asctime(bytes)
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`.
    private static func fixdate(_ b: [UInt8]) -> Date? {
        guard b.count == 29, days.contains(string(b, 0, 3)), b[3] == UInt8(ascii: ","), b[4] == 32, b[7] == 32,
            b[11] == 32, b[16] == 32, b[25] == 32, string(b, 26, 3) == "GMT",
            let day = number(b, 5, 2), let month = months.firstIndex(of: string(b, 8, 3)),
            let year = number(b, 12, 4)
        else { return nil }
        return date(year: year, month: month + 1, day: day, clock: b, at: 17)
    }

    /// `Sunday, 06-Nov-94 08:49:37 GMT` (a two-digit year more than 50 years ahead is in the past century).
    private static func rfc850(_ b: [UInt8]) -> Date? {
        guard let comma = b.firstIndex(of: UInt8(ascii: ",")), longDays.contains(string(b, 0, comma)),
            b.count == comma + 24, b[comma + 1] == 32, b[comma + 4] == UInt8(ascii: "-"),
            b[comma + 8] == UInt8(ascii: "-"), b[comma + 11] == 32, b[comma + 20] == 32,
            string(b, comma + 21, 3) == "GMT",
            let day = number(b, comma + 2, 2), let month = months.firstIndex(of: string(b, comma + 5, 3)),
            let shortYear = number(b, comma + 9, 2)
        else { return nil }
        let thisYear = Calendar(identifier: .gregorian).component(.year, from: Date())
        var year = thisYear - thisYear % 100 + shortYear
        if year > thisYear + 50 { year -= 100 }
        return date(year: year, month: month + 1, day: day, clock: b, at: comma + 12)
    }

    /// `Sun Nov  6 08:49:37 1994`.
    private static func asctime(_ b: [UInt8]) -> Date? {
        guard b.count == 24, days.contains(string(b, 0, 3)), b[3] == 32, b[7] == 32, b[10] == 32, b[19] == 32,
            let month = months.firstIndex(of: string(b, 4, 3)),
            let day = b[8] == 32 ? number(b, 9, 1) : number(b, 8, 2), let year = number(b, 20, 4)
        else { return nil }
        return date(year: year, month: month + 1, day: day, clock: b, at: 11)
    }

    /// The date at `HH:MM:SS` found at `offset` in `b`, or `nil` when any part is out of range.
    private static func date(year: Int, month: Int, day: Int, clock b: [UInt8], at offset: Int) -> Date? {
        guard b[offset + 2] == UInt8(ascii: ":"), b[offset + 5] == UInt8(ascii: ":"),
            let hour = number(b, offset, 2), let minute = number(b, offset + 3, 2),
            let second = number(b, offset + 6, 2),
            (1601...9999).contains(year), (1...daysIn(month: month, year: year)).contains(day), (0..<24).contains(hour),
            (0..<60).contains(minute), (0...60).contains(second)
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3600 + minute * 60 + second))
    }

    /// The days of `month` (1–12) in the proleptic Gregorian `year`: 31 February is not a date, and not 3 March.
    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Exactly `count` ASCII digits at `offset`.
    private static func number(_ b: [UInt8], _ offset: Int, _ count: Int) -> Int? {
        guard offset >= 0, offset + count <= b.count else { return nil }
        var value = 0
        for byte in b[offset..<(offset + count)] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    private static func string(_ b: [UInt8], _ offset: Int, _ count: Int) -> String {
        guard offset >= 0, count >= 0, offset + count <= b.count else { return "" }
        return String(decoding: b[offset..<(offset + count)], as: UTF8.self)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
