import Foundation
import Testing

@testable import CourierCore

@Suite("URLEncodedFormEncoder")
struct URLEncodedFormEncoderTests {
    struct Item: Encodable {
        var id: Int
        var name: String
    }

    struct Profile: Encodable {
        var zip: String
        var city: String
    }

    struct User: Encodable {
        var name: String
        var profile: Profile
    }

    struct Wrapper<Value: Encodable>: Encodable {
        var value: Value
    }

    struct Optionals: Encodable {
        var a: Int?
        var b: String?
        var c: Wrapper<Int>?
    }

    enum Color: String, Encodable {
        case red, blue
    }

    struct Failure: Error {}

    private let date = Date(timeIntervalSince1970: 1_704_164_645)

    // MARK: - Structure

    @Test func flatStructWithDefaults() throws {
        struct Search: Encodable {
            var query: String
            var page: Int
            var ratio: Double
            var exact: Bool
        }
        let text = try URLEncodedFormEncoder().encode(Search(query: "swift", page: 2, ratio: 1.5, exact: true))
        #expect(text == "exact=true&page=2&query=swift&ratio=1.5")
    }

    @Test func documentationExample() throws {
        struct Search: Encodable {
            var query: String
            var tags: [String]
            var page: Int?
        }
        let query = try URLEncodedFormEncoder().encode(Search(query: "swift http", tags: ["a+b", "c"], page: nil))
        #expect(query == "query=swift%20http&tags%5B%5D=a%2Bb&tags%5B%5D=c")
    }

    @Test func nestedKeysAreBracketedAndSortedAtEveryLevel() throws {
        let user = User(name: "Ann", profile: Profile(zip: "123", city: "Oslo"))
        let pairs = try URLEncodedFormEncoder().encodePairs(Wrapper(value: user))
        #expect(pairs.map(\.name) == ["value[name]", "value[profile][city]", "value[profile][zip]"])
        #expect(pairs.map(\.value) == ["Ann", "Oslo", "123"])
        let deep = try URLEncodedFormEncoder().encode(["a": ["b": ["c": "d"]]])
        #expect(deep == "a%5Bb%5D%5Bc%5D=d")
    }

    @Test(arguments: [
        (URLEncodedFormEncoder.ArrayEncoding.brackets, ["tags[]", "tags[]"]),
        (.noBrackets, ["tags", "tags"]),
        (.indexed, ["tags[0]", "tags[1]"]),
    ])
    func arrayStyles(style: URLEncodedFormEncoder.ArrayEncoding, names: [String]) throws {
        let encoder = URLEncodedFormEncoder(arrayEncoding: style)
        let pairs = try encoder.encodePairs(["tags": ["b", "a"]])
        #expect(pairs.map(\.name) == names)
        #expect(pairs.map(\.value) == ["b", "a"])
    }

    @Test(arguments: [
        (URLEncodedFormEncoder.ArrayEncoding.brackets, "items[][id]=1&items[][name]=x&items[][id]=2&items[][name]=y"),
        (.noBrackets, "items[id]=1&items[name]=x&items[id]=2&items[name]=y"),
        (.indexed, "items[0][id]=1&items[0][name]=x&items[1][id]=2&items[1][name]=y"),
    ])
    func arraysOfObjects(style: URLEncodedFormEncoder.ArrayEncoding, expected: String) throws {
        let encoder = URLEncodedFormEncoder(arrayEncoding: style)
        let pairs = try encoder.encodePairs(["items": [Item(id: 1, name: "x"), Item(id: 2, name: "y")]])
        #expect(pairs.map { "\($0.name)=\($0.value)" }.joined(separator: "&") == expected)
    }

    @Test func nestedArraysAndEncodedBrackets() throws {
        let text = try URLEncodedFormEncoder(arrayEncoding: .indexed).encode(["m": [[1, 2], [3]]])
        #expect(text == "m%5B0%5D%5B0%5D=1&m%5B0%5D%5B1%5D=2&m%5B1%5D%5B0%5D=3")
    }

    @Test func emptyArraysAndObjectsEmitNothing() throws {
        struct Empty: Encodable {
            var list: [Int] = []
            var map: [String: Int] = [:]
            var name = "n"
        }
        #expect(try URLEncodedFormEncoder().encode(Empty()) == "name=n")
        #expect(try URLEncodedFormEncoder().encode([String: Int]()) == "")
    }

    // MARK: - Optionals and ordering

    @Test func nilIsDroppedByDefault() throws {
        let value = Optionals(a: nil, b: "x", c: nil)
        #expect(try URLEncodedFormEncoder().encode(value) == "b=x")
        #expect(try URLEncodedFormEncoder().encode(["k": [1, nil, 3]]) == "k%5B%5D=1&k%5B%5D=3")
        let indexed = try URLEncodedFormEncoder(arrayEncoding: .indexed).encodePairs(["k": [1, nil, 3]])
        #expect(indexed.map(\.name) == ["k[0]", "k[2]"])
    }

    @Test func nilAsEmptyValue() throws {
        let encoder = URLEncodedFormEncoder(nilEncoding: .emptyValue)
        #expect(try encoder.encode(Optionals(a: nil, b: "x", c: nil)) == "a=&b=x&c=")
        #expect(try encoder.encode(Optionals(a: 1, b: nil, c: Wrapper(value: 2))) == "a=1&b=&c%5Bvalue%5D=2")
        #expect(try encoder.encode(["k": [1, nil]] as [String: [Int?]]) == "k%5B%5D=1&k%5B%5D=")
        #expect(try encoder.encode(["a": nil, "b": 2] as [String: Int?]) == "a=&b=2")
    }

    @Test func fiftyDictionaryKeysAreSorted() throws {
        var input: [String: Int] = [:]
        for number in 0..<50 {
            input["key\(number)"] = number
        }
        let expected = input.keys.sorted().map { "\($0)=\(input[$0] ?? -1)" }.joined(separator: "&")
        let first = try URLEncodedFormEncoder().encode(input)
        #expect(first == expected)
        #expect(first.hasPrefix("key0=0&key1=1&key10=10&key11=11"))
        for _ in 0..<5 {
            var copy: [String: Int] = [:]
            for (key, value) in input.shuffled() {
                copy[key] = value
            }
            #expect(try URLEncodedFormEncoder().encode(copy) == first)
        }
    }

    @Test func sortingUsesCodePointOrder() throws {
        let pairs = try URLEncodedFormEncoder().encodePairs(["b": 1, "B": 2, "a": 3, "é": 4, "_": 5])
        #expect(pairs.map(\.name) == ["B", "_", "a", "b", "é"])
    }

    @Test func encodingOrderKeepsDeclarationOrder() throws {
        struct Ordered: Encodable {
            var zeta = 1
            var alpha = 2
            var mid = Profile(zip: "9", city: "C")
        }
        let encoder = URLEncodedFormEncoder(keyOrdering: .encodingOrder)
        #expect(try encoder.encode(Ordered()) == "zeta=1&alpha=2&mid%5Bzip%5D=9&mid%5Bcity%5D=C")
        #expect(try URLEncodedFormEncoder().encode(Ordered()) == "alpha=2&mid%5Bcity%5D=C&mid%5Bzip%5D=9&zeta=1")
    }

    // MARK: - Percent encoding

    @Test(arguments: [
        ("AZaz09-._~", "AZaz09-._~"), ("a+b", "a%2Bb"), ("x&y=z", "x%26y%3Dz"), (";", "%3B"),
        ("a b", "a%20b"), ("é", "%C3%A9"), ("😀", "%F0%9F%98%80"), ("[]", "%5B%5D"), ("/", "%2F"),
        ("?", "%3F"), ("#", "%23"), ("%", "%25"), ("%41", "%2541"), ("\n", "%0A"), ("*'()!", "%2A%27%28%29%21"),
    ])
    func rfc3986ValueAndName(input: String, expected: String) throws {
        #expect(try URLEncodedFormEncoder().encode(["k": input]) == "k=\(expected)")
        #expect(try URLEncodedFormEncoder().encode([input: "v"]) == "\(expected)=v")
    }

    @Test(arguments: [("a b", "a+b"), ("a+b", "a%2Bb"), ("a b+c", "a+b%2Bc"), ("x y", "x+y")])
    func plusSpaceEncoding(input: String, expected: String) throws {
        let encoder = URLEncodedFormEncoder(spaceEncoding: .plus)
        #expect(try encoder.encode([input: input]) == "\(expected)=\(expected)")
    }

    @Test func nonASCIIKeysAndValues() throws {
        let pairs = try URLEncodedFormEncoder().encodePairs(["ключ": "значение 東京"])
        #expect(pairs.first?.name == "ключ")
        #expect(try URLEncodedFormEncoder().encode(["名": "東京"]) == "%E5%90%8D=%E6%9D%B1%E4%BA%AC")
    }

    // MARK: - Errors

    @Test func topLevelValueMustBeKeyed() throws {
        let encoder = URLEncodedFormEncoder()
        let errors: [EncodingError] = [
            try #require(throws: EncodingError.self) { try encoder.encode(42) },
            try #require(throws: EncodingError.self) { try encoder.encode("text") },
            try #require(throws: EncodingError.self) { try encoder.encode([1, 2]) },
            try #require(throws: EncodingError.self) { try encoder.encodePairs(Int?.none) },
            try #require(throws: EncodingError.self) { try encoder.encode(date) },
        ]
        for error in errors {
            guard case .invalidValue(_, let context) = error else {
                Issue.record("Expected invalidValue, got \(error)")
                continue
            }
            #expect(context.debugDescription.contains("top-level value must be a keyed container"))
        }
    }

    @Test func nonFiniteNumbersThrowWithCodingPath() throws {
        struct Scores: Encodable {
            var tags: [Double]
        }
        let value = ["user": Scores(tags: [1, .nan])]
        let error = try #require(throws: EncodingError.self) { try URLEncodedFormEncoder().encode(value) }
        guard case .invalidValue(_, let context) = error else {
            Issue.record("Expected invalidValue, got \(error)")
            return
        }
        #expect(context.debugDescription.contains("user.tags[1]"))
        #expect(context.codingPath.map(\.stringValue) == ["user", "tags", "Index 1"])
        #expect(throws: EncodingError.self) { try URLEncodedFormEncoder().encode(["f": Float.infinity]) }
        #expect(throws: EncodingError.self) { try URLEncodedFormEncoder().encode(["d": -Double.infinity]) }
    }

    @Test("Decimal NaN throws with its coding path, as Double NaN does, instead of sending the text NaN")
    func decimalNaNThrows() throws {
        let error = try #require(throws: EncodingError.self) {
            try URLEncodedFormEncoder().encode(["payment": ["amount": Decimal.nan]])
        }
        guard case .invalidValue(_, let context) = error else {
            Issue.record("Expected invalidValue, got \(error)")
            return
        }
        #expect(context.debugDescription.contains("payment.amount"))
        #expect(try URLEncodedFormEncoder().encode(["amount": Decimal(string: "12.50")]) == "amount=12.5")
    }

    /// A key type Swift's `Dictionary` encodes as a flat array of keys and values (not `CodingKeyRepresentable`).
    enum Status: String, Encodable, Hashable { case open, closed }
    /// The same, `CodingKeyRepresentable`: Swift encodes the dictionary by key.
    enum Field: String, Encodable, Hashable, CodingKeyRepresentable { case a, b }

    @Test("a dictionary with keys Swift encodes as a flat array in hash order throws, naming the path and key type")
    func dictionaryWithNonStringKeysThrows() throws {
        let error = try #require(throws: EncodingError.self) {
            try URLEncodedFormEncoder().encode(["filter": [Status.open: 1, Status.closed: 0]])
        }
        guard case .invalidValue(_, let context) = error else {
            Issue.record("Expected invalidValue, got \(error)")
            return
        }
        #expect(context.debugDescription.contains("filter"))
        #expect(context.debugDescription.contains("Status"))
        // Keys Swift encodes by key still encode, sorted.
        #expect(
            try URLEncodedFormEncoder().encode(["f": [Field.b: 1, Field.a: 2]])
                == URLEncodedFormEncoder().encode(["f": ["a": 2, "b": 1]]))
        #expect(try URLEncodedFormEncoder().encode(["f": [2: "x", 1: "y"]]) == "f%5B1%5D=y&f%5B2%5D=x")
    }

    @Test("a Set of Comparable elements encodes sorted, the same on every run; in encoding order, as it iterates")
    func setsEncodeSorted() throws {
        let ids: Set<String> = ["c", "a", "e", "b", "d"]
        #expect(
            try URLEncodedFormEncoder().encode(["ids": ids])
                == URLEncodedFormEncoder().encode(["ids": ["a", "b", "c", "d", "e"]]))
        #expect(
            try URLEncodedFormEncoder(keyOrdering: .encodingOrder).encode(["ids": ids])
                == URLEncodedFormEncoder(keyOrdering: .encodingOrder).encode(["ids": Array(ids)]))
    }

    // MARK: - Scalar strategies

    @Test(arguments: [(URLEncodedFormEncoder.BoolEncoding.literal, "f=false&t=true"), (.numeric, "f=0&t=1")])
    func boolStrategies(strategy: URLEncodedFormEncoder.BoolEncoding, expected: String) throws {
        #expect(try URLEncodedFormEncoder(boolEncoding: strategy).encode(["t": true, "f": false]) == expected)
    }

    @Test func dateStrategies() throws {
        func encode(_ strategy: URLEncodedFormEncoder.DateEncoding, _ date: Date) throws -> String {
            try URLEncodedFormEncoder(dateEncoding: strategy).encodePairs(["d": date]).first?.value ?? ""
        }
        #expect(try encode(.iso8601, date) == "2024-01-02T03:04:05Z")
        #expect(try URLEncodedFormEncoder().encode(["d": date]) == "d=2024-01-02T03%3A04%3A05Z")
        #expect(try encode(.secondsSince1970, date) == "1704164645")
        #expect(try encode(.secondsSince1970, date.addingTimeInterval(0.5)) == "1704164645.5")
        #expect(try encode(.millisecondsSince1970, date) == "1704164645000")
        #expect(try encode(.custom { "t\(Int($0.timeIntervalSince1970))" }, date) == "t1704164645")
    }

    @Test func customStrategyErrorsCarryTheCodingPath() throws {
        let encoder = URLEncodedFormEncoder(dateEncoding: .custom { _ in throw Failure() })
        let error = try #require(throws: EncodingError.self) { try encoder.encode(["when": ["at": date]]) }
        guard case .invalidValue(_, let context) = error else {
            Issue.record("Expected invalidValue, got \(error)")
            return
        }
        #expect(context.debugDescription.contains("when.at"))
        #expect(context.underlyingError is Failure)
    }

    @Test func dataStrategies() throws {
        let data = Data([0xFB, 0xFF, 0x00])
        #expect(try URLEncodedFormEncoder().encodePairs(["d": data]).first?.value == "+/8A")
        #expect(try URLEncodedFormEncoder().encode(["d": data]) == "d=%2B%2F8A")
        let hex = URLEncodedFormEncoder(dataEncoding: .custom { $0.map { String(format: "%02x", $0) }.joined() })
        #expect(try hex.encode(["d": data]) == "d=fbff00")
    }

    @Test func otherScalars() throws {
        struct Scalars: Encodable {
            var color = Color.blue
            var decimal = Decimal(string: "12.50") ?? 0
            var float: Float = 1.5
            var int8: Int8 = -8
            var uint64 = UInt64.max
            var url = URL(string: "https://example.com/a?b=c")
        }
        let pairs = try URLEncodedFormEncoder().encodePairs(Scalars())
        #expect(pairs.map(\.name) == ["color", "decimal", "float", "int8", "uint64", "url"])
        let values = ["blue", "12.5", "1.5", "-8", "18446744073709551615", "https://example.com/a?b=c"]
        #expect(pairs.map(\.value) == values)
        #expect(try URLEncodedFormEncoder().encode(["big": Int128.max]) == "big=\(Int128.max)")
        let fractional = date.addingTimeInterval(0.9)
        #expect(try URLEncodedFormEncoder().encodePairs(["d": fractional]).first?.value == "2024-01-02T03:04:05Z")
    }

    @Test func customContainersSuperEncoderAndRepeatedKeys() throws {
        struct Custom: Encodable {
            enum Key: String, CodingKey { case base, list, name }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Key.self)
                try container.encode("first", forKey: .name)
                try container.encode("second", forKey: .name)
                var list = container.nestedUnkeyedContainer(forKey: .list)
                var element = list.nestedContainer(keyedBy: Key.self)
                try element.encode(true, forKey: .name)
                try Profile(zip: "1", city: "X").encode(to: container.superEncoder(forKey: .base))
                try 7.encode(to: container.superEncoder())
            }
        }
        let encoder = URLEncodedFormEncoder(keyOrdering: .encodingOrder)
        let pairs = try encoder.encodePairs(Custom())
        #expect(
            pairs.map { "\($0.name)=\($0.value)" } == [
                "name=second", "list[][name]=true", "base[zip]=1", "base[city]=X", "super=7",
            ])
    }
}
