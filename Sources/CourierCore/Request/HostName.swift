/// Host names in the one form every policy decision compares.
///
/// Lowercased, with the dots IDNA treats as dots (`。` U+3002, `．` U+FF0E, `｡` U+FF61) turned into `.`, each
/// non-ASCII label turned into its Punycode A-label (`bücher` → `xn--bcher-kva`, RFC 3492), IPv6 brackets and a
/// trailing dot removed. So `API.Example.com.`, `api.example.com` and `api。example。com` are one host for
/// same-origin checks, credential scoping and pin matching, and a look-alike Unicode host never matches an ASCII
/// one. (Full UTS #46 mapping, such as case folding beyond ASCII and width normalisation of letters, is not done:
/// such a host gets its own A-label, which then matches nothing configured in ASCII.)
package enum HostName {
    package static func canonical(_ host: some StringProtocol) -> String {
        var host = String(host)
        if host.hasPrefix("["), host.hasSuffix("]") { return String(host.dropFirst().dropLast()).lowercased() }
        host = String(
            host.map { character -> Character in
                switch character {
                case "\u{3002}", "\u{FF0E}", "\u{FF61}": "."
                default: character
                }
            })
        while host.hasSuffix(".") { host.removeLast() }
        guard !host.allSatisfy(\.isASCII) else { return host.lowercased() }
        return host.split(separator: ".", omittingEmptySubsequences: false)
            .map { label in
                let lowered = label.lowercased()
                guard !lowered.allSatisfy(\.isASCII), let encoded = Punycode.encode(lowered) else { return lowered }
                return "xn--" + encoded
            }
            .joined(separator: ".")
    }
}

/// Punycode encoding (RFC 3492 §6.3).
enum Punycode {
    private static let base = 36
    private static let tMin = 1
    private static let tMax = 26
    private static let skew = 38
    private static let damp = 700
    private static let initialBias = 72
    private static let initialN = 128

    static func encode(_ input: String) -> String? {
        let scalars = input.unicodeScalars.map { Int($0.value) }
        var output = scalars.filter { $0 < 0x80 }.compactMap { Unicode.Scalar($0).map(Character.init) }
        let basicCount = output.count
        var handled = basicCount
        if basicCount > 0 { output.append("-") }
        var n = initialN
        var delta = 0
        var bias = initialBias
        while handled < scalars.count {
            guard let m = scalars.filter({ $0 >= n }).min() else { return nil }
            let (product, overflow) = (m - n).multipliedReportingOverflow(by: handled + 1)
            guard !overflow else { return nil }
            delta += product
            n = m
            for scalar in scalars {
                if scalar < n { delta += 1 }
                if scalar == n {
                    var q = delta
                    var k = base
                    while true {
                        let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                        if q < t { break }
                        output.append(digit(t + (q - t) % (base - t)))
                        q = (q - t) / (base - t)
                        k += base
                    }
                    output.append(digit(q))
                    bias = adapt(delta, handled + 1, handled == basicCount)
                    delta = 0
                    handled += 1
                }
            }
            delta += 1
            n += 1
        }
        return String(output)
    }

    private static func digit(_ value: Int) -> Character {
        let scalar = value < 26 ? 97 + value : 22 + value
        return Character(Unicode.Scalar(UInt8(scalar)))
    }

    private static func adapt(_ delta: Int, _ count: Int, _ first: Bool) -> Int {
        var delta = first ? delta / damp : delta / 2
        delta += delta / count
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + skew)
    }
}
