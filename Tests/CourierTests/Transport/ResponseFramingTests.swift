import CourierCore
import HTTPTypes
import Testing

@Suite("ResponseFraming")
struct ResponseFramingTests {
    private static func head(_ fields: [(String, String)], status: Int = 200) -> HTTPResponse {
        var headerFields = HTTPFields()
        for (name, value) in fields {
            if let name = HTTPField.Name(name) { headerFields.append(HTTPField(name: name, value: value)) }
        }
        return HTTPResponse(status: .init(code: status), headerFields: headerFields)
    }

    private static func code(of fields: [(String, String)]) -> CourierError.Code? {
        do {
            _ = try ResponseFraming(of: head(fields), method: .get)
            return nil
        } catch {
            return (error as? CourierError)?.code
        }
    }

    @Test("a single Content-Length is the expected length; repeated identical values are that value")
    func lengths() throws {
        #expect(try ResponseFraming(of: Self.head([("Content-Length", "112")]), method: .get).expectedLength == 112)
        #expect(try ResponseFraming(of: Self.head([("Content-Length", "0")]), method: .get).expectedLength == 0)
        #expect(try ResponseFraming(of: Self.head([("Content-Length", "5, 5")]), method: .get).expectedLength == 5)
        let repeated = Self.head([("Content-Length", "7"), ("content-length", "7")])
        #expect(try ResponseFraming(of: repeated, method: .get).expectedLength == 7)
        #expect(try ResponseFraming(of: Self.head([]), method: .get).expectedLength == nil)
        let big = "123456789012345678"
        #expect(try ResponseFraming(of: Self.head([("Content-Length", big)]), method: .get).contentLength == Int64(big))
    }

    @Test("conflicting, signed, empty or overflowing Content-Length values are malformed")
    func malformedLengths() {
        for value in ["5, 6", "+5", "-1", "", "5a", "99999999999999999999", "0x10"] {
            #expect(Self.code(of: [("Content-Length", value)]) == .malformedResponse, "\(value)")
        }
        #expect(Self.code(of: [("Content-Length", "5"), ("Content-Length", "6")]) == .malformedResponse)
    }

    @Test("Content-Length next to Transfer-Encoding is malformed, in either order")
    func lengthAndTransferEncoding() {
        #expect(Self.code(of: [("Content-Length", "5"), ("Transfer-Encoding", "chunked")]) == .malformedResponse)
        #expect(Self.code(of: [("Transfer-Encoding", "chunked"), ("Content-Length", "5")]) == .malformedResponse)
        #expect(Self.code(of: [("Transfer-Encoding", "chunked")]) == nil)
    }

    @Test("an encoded body has no expected length; identity is not an encoding; stacked or unknown codings fail")
    func encodings() throws {
        let gzip = try ResponseFraming(
            of: Self.head([("Content-Length", "40"), ("Content-Encoding", "gzip")]), method: .get)
        #expect(gzip.isEncoded && gzip.expectedLength == nil && gzip.contentLength == 40)
        let identity = try ResponseFraming(
            of: Self.head([("Content-Length", "40"), ("Content-Encoding", "Identity")]), method: .get)
        #expect(!identity.isEncoded && identity.expectedLength == 40)
        #expect(Self.code(of: [("Content-Encoding", "gzip, gzip")]) == .unsupported)
        #expect(Self.code(of: [("Content-Encoding", "gzip"), ("Content-Encoding", "deflate")]) == .unsupported)
        #expect(Self.code(of: [("Content-Encoding", "zstd")]) == .unsupported)
    }

    @Test("a response without a body (HEAD, 204, 304) expects 0 bytes whatever Content-Length says")
    func noBody() throws {
        let announced = Self.head([("Content-Length", "5000")])
        #expect(try ResponseFraming(of: announced, method: .head).expectedLength == 0)
        #expect(
            try ResponseFraming(of: Self.head([("Content-Length", "9")], status: 304), method: .get)
                .expectedLength == 0)
    }
}
