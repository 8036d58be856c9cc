/// One challenge of a `WWW-Authenticate` header (RFC 9110 §11.6.1): a scheme and its parameters.
struct AuthenticationChallenge: Equatable, Sendable {
    /// The scheme, lowercased (`bearer`, `basic`).
    var scheme: String
    /// The auth-params, names lowercased, quoted values unescaped.
    var parameters: [String: String]

    /// Every challenge in `values` (one entry per `WWW-Authenticate` field line), in order.
    ///
    /// A challenge starts at the beginning of a line or after a comma with a token not followed by `=`;
    /// `name=value` pairs belong to the challenge before them; a token68 is skipped.
    static func parse(_ values: [String]) -> [AuthenticationChallenge] {
        var challenges: [AuthenticationChallenge] = []
        for value in values {
            parse(Array(value.unicodeScalars), into: &challenges)
        }
        return challenges
    }

    private static func parse(_ scalars: [Unicode.Scalar], into challenges: inout [AuthenticationChallenge]) {
        var index = 0
        var startsElement = true
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "," {
                startsElement = true
                index += 1
                continue
            }
            if scalar == " " || scalar == "\t" {
                index += 1
                continue
            }
            let token = readToken(scalars, at: &index)
            guard !token.isEmpty else {
                index += 1  // a stray "=" or quote
                continue
            }
            var next = index
            skipWhitespace(scalars, at: &next)
            if next < scalars.count, scalars[next] == "=" {
                index = next + 1
                skipWhitespace(scalars, at: &index)
                let value: String
                if index < scalars.count, scalars[index] == "\"" {
                    value = readQuoted(scalars, at: &index)
                } else {
                    value = readToken(scalars, at: &index)
                }
                if !challenges.isEmpty {
                    challenges[challenges.count - 1].parameters[token.lowercased()] = value
                }
            } else if startsElement {
                challenges.append(AuthenticationChallenge(scheme: token.lowercased(), parameters: [:]))
            }
            startsElement = false
        }
    }

    private static func readToken(_ scalars: [Unicode.Scalar], at index: inout Int) -> String {
        var token = String.UnicodeScalarView()
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == " " || scalar == "\t" || scalar == "," || scalar == "=" || scalar == "\"" { break }
            token.append(scalar)
            index += 1
        }
        return String(token)
    }

    private static func readQuoted(_ scalars: [Unicode.Scalar], at index: inout Int) -> String {
        var value = String.UnicodeScalarView()
        index += 1  // the opening quote
        while index < scalars.count {
            let scalar = scalars[index]
            index += 1
            if scalar == "\"" { break }
            if scalar == "\\", index < scalars.count {
                value.append(scalars[index])
                index += 1
            } else {
                value.append(scalar)
            }
        }
        return String(value)
    }

    private static func skipWhitespace(_ scalars: [Unicode.Scalar], at index: inout Int) {
        while index < scalars.count, scalars[index] == " " || scalars[index] == "\t" { index += 1 }
    }
}
