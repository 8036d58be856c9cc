import Foundation
import Testing

@testable import CourierCore

/// A dictionary literal of strings, numbers, booleans and their arrays is flattened without the `Encoder`
/// (``Parameters/flatPairs(using:)``); everything it produces must be what the `Encoder` produces.
@Suite("Parameters: the direct path gives the Encoder's pairs")
struct ParametersFastPathTests {
    /// Hides the `Parameters` type from ``URLEncodedFormEncoder``, so it takes its `Encoder`.
    struct ThroughEncoder: Encodable {
        let parameters: Parameters
        func encode(to encoder: any Encoder) throws { try parameters.encode(to: encoder) }
    }

    static let literals: [Parameters] = [
        [:],
        ["q": "swift http client", "page": 3, "per_page": 50, "sort": "updated", "tags": ["nio", "async"]],
        ["b": true, "a": false, "Z": "upper", "é": "accent", "10": 10, "9": 9],
        ["score": 0.75, "big": 1e21, "negative": -2.5, "zero": 0.0],
        ["ids": [3, 1, 2], "flags": [true, false], "ratios": [0.5, 2.0], "empty": [String]()],
        ["tags": ["a+b", "c d", "ü/?&="], "tags2": "later"],
        ["only": "one"],
    ]

    static let encoders: [URLEncodedFormEncoder] = [
        URLEncodedFormEncoder(),
        URLEncodedFormEncoder(arrayEncoding: .noBrackets, boolEncoding: .numeric),
        URLEncodedFormEncoder(arrayEncoding: .indexed, spaceEncoding: .plus, keyOrdering: .encodingOrder),
    ]

    @Test("same pairs and same text as the Encoder", arguments: literals.indices, encoders.indices)
    func sameAsEncoder(literal: Int, encoder: Int) throws {
        let parameters = Self.literals[literal]
        let encoder = Self.encoders[encoder]
        let direct = try #require(parameters.flatPairs(using: encoder), "the direct path should handle it")
        let expected = try encoder.encodePairs(ThroughEncoder(parameters: parameters))
        #expect(direct.map(\.name) == expected.map(\.name))
        #expect(direct.map(\.value) == expected.map(\.value))
        #expect(try encoder.encode(parameters) == encoder.encode(ThroughEncoder(parameters: parameters)))
    }

    @Test("a repeated name, a nil, a nested value or a non-finite number is left to the Encoder, with its result")
    func leftToEncoder() throws {
        let encoder = URLEncodedFormEncoder()
        let repeated: Parameters = ["a": 1, "b": 2, "a": 3]
        let optional: Int? = nil
        let withNil: Parameters = ["a": 1, "b": optional]
        let nested: Parameters = ["user": ["name": "Ann"], "page": 1]
        let dated: Parameters = ["at": Date(timeIntervalSince1970: 0)]
        for parameters in [repeated, withNil, nested, dated] {
            #expect(parameters.flatPairs(using: encoder) == nil)
            #expect(try encoder.encode(parameters) == encoder.encode(ThroughEncoder(parameters: parameters)))
        }
        #expect(try encoder.encode(repeated) == "a=3&b=2")
        let infinite: Parameters = ["x": Double.infinity]
        #expect(infinite.flatPairs(using: encoder) == nil)
        #expect(throws: EncodingError.self) { try encoder.encode(infinite) }
        let infiniteInArray: Parameters = ["x": [1.0, Double.nan]]
        #expect(infiniteInArray.flatPairs(using: encoder) == nil)
        #expect(throws: EncodingError.self) { try encoder.encode(infiniteInArray) }
    }
}
