#if TestServer
    import Foundation

    /// IMF-fixdate formatting (`Sun, 06 Nov 1994 08:49:37 GMT`) for `Last-Modified` and cookie expiry.
    enum HTTPDate {
        private static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
        private static let months = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ]

        /// `date` as an IMF-fixdate.
        static func format(_ date: Date) -> String {
            let seconds = Int(date.timeIntervalSince1970.rounded(.down))
            let dayNumber = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
            let secondOfDay = seconds - dayNumber * 86_400
            let (year, month, day) = civilDate(daysSinceEpoch: dayNumber)
            let weekday = days[((dayNumber % 7) + 7) % 7]
            func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
            let time = "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))"
            return "\(weekday), \(two(day)) \(months[month - 1]) \(year) \(time) GMT"
        }

        /// Howard Hinnant's `civil_from_days`.
        private static func civilDate(daysSinceEpoch: Int) -> (year: Int, month: Int, day: Int) {
            let shifted = daysSinceEpoch + 719_468
            let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
            let dayOfEra = shifted - era * 146_097
            let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
            let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
            let monthIndex = (5 * dayOfYear + 2) / 153
            let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
            let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
            return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
        }
    }
#endif
