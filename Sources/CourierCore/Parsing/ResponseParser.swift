public import Foundation
public import HTTPTypes

/// Turns the final response into a request's ``Request/Response``: the last, required step of every call.
///
/// Parsing runs after the decisions accepted the response. A parser that throws fails the call with
/// ``CourierError/Code/decodingFailed`` at the ``CourierError/Stage/parse`` stage, keeping the underlying error
/// (a `DecodingError` with its coding path, for JSON).
public protocol ResponseParser<Output>: Sendable {
    /// The parsed value's type.
    associatedtype Output: Sendable

    /// Parses `response`.
    func parse(_ response: ReceivedResponse, context: ParseContext) throws -> Output

    /// This parser, when it reads bodies as they arrive (a ``StreamingResponseParser``); `nil` otherwise.
    ///
    /// Both defaults are provided: the pipeline asks this instead of casting to a parameterized existential on
    /// every call, which costs several microseconds at run time.
    var streamingParser: (any StreamingResponseParser<Output>)? { get }
}

extension ResponseParser {
    /// `nil`: the parser reads the whole body from memory.
    public var streamingParser: (any StreamingResponseParser<Output>)? { nil }
}

/// What a parser knows about the call.
public struct ParseContext: Sendable {
    /// The request as sent.
    public var request: HTTPRequest
    /// The client's JSON decoder.
    public var jsonDecoder: JSONDecoder

    /// Creates a parse context.
    public init(request: HTTPRequest, jsonDecoder: JSONDecoder = JSONDecoder()) {
        self.request = request
        self.jsonDecoder = jsonDecoder
    }
}

/// Decodes a JSON body into a `Decodable` value.
public struct JSONParser<Output: Decodable & Sendable>: ResponseParser {
    /// A decoder for this request only; `nil` uses the client's.
    public let decoder: JSONDecoder?

    /// Creates a JSON parser.
    public init(decoder: JSONDecoder? = nil) { self.decoder = decoder }

    /// Decodes the body.
    ///
    /// An empty body is `nil` when `Output` is optional (`User?` answered by `204 No Content`), and an error for
    /// any other type.
    ///
    /// - Throws: ``CourierError/Code/decodingFailed`` for an empty or malformed body, or one that does not match
    ///   `Output`; the message names the coding path.
    public func parse(_ response: ReceivedResponse, context: ParseContext) throws -> Output {
        guard !response.body.isEmpty else {
            if let empty = (Output.self as? any EmptyBodyOptional.Type)?.emptyBodyValue as? Output { return empty }
            throw CourierError(
                code: .decodingFailed,
                stage: .parse,
                message: "the body is empty, expected JSON for \(Output.self)"
            )
        }
        do {
            return try (decoder ?? context.jsonDecoder).decode(Output.self, from: response.body)
        } catch {
            throw CourierError(
                code: .decodingFailed,
                stage: .parse,
                message: "could not decode \(Output.self): \(DecodingErrorDescription(error))"
                    + Self.contentTypeNote(response.head.headerFields[.contentType], error: error),
                underlyingError: error
            )
        }
    }

    /// For a body that is not JSON at all, what it is instead (a captive portal's HTML page, a proxy's error text):
    /// the decoder says only "not valid JSON".
    private static func contentTypeNote(_ contentType: String?, error: any Error) -> String {
        guard case DecodingError.dataCorrupted(let context) = error, context.codingPath.isEmpty else { return "" }
        guard let contentType, !contentType.lowercased().contains("json") else { return "" }
        return " (the response's Content-Type is \(contentType.prefix(64)))"
    }
}

/// An optional type, whose value for an empty body is `nil` (``JSONParser``).
private protocol EmptyBodyOptional {
    static var emptyBodyValue: Self { get }
}

extension Optional: EmptyBodyOptional {
    fileprivate static var emptyBodyValue: Self { nil }
}

/// Returns the body's bytes as they arrived.
public struct DataParser: ResponseParser {
    /// Creates a data parser.
    public init() {}

    /// Returns the body.
    public func parse(_ response: ReceivedResponse, context: ParseContext) throws -> Data { response.body }
}

/// Decodes the body as text, in the charset its `Content-Type` names (UTF-8 when none; ISO-8859-1, US-ASCII,
/// Windows-1252, UTF-16 and UTF-32, with or without their byte order, are understood). A body in another charset
/// decodes only when it is plain ASCII, which every such charset shares; otherwise the parse fails, rather than
/// reading its bytes as UTF-8. A UTF-8, UTF-16 or UTF-32 byte order mark names the encoding whatever the label says,
/// as browsers decode, and is not part of the text.
public struct StringParser: ResponseParser {
    /// Creates a string parser.
    public init() {}

    /// Decodes the body.
    ///
    /// - Throws: ``CourierError/Code/decodingFailed`` when the bytes are not valid in the charset.
    public func parse(_ response: ReceivedResponse, context: ParseContext) throws -> String {
        let charset = Self.charset(of: response.head.headerFields[.contentType])
        let encoding: String.Encoding
        var body = response.body
        if let marked = Self.byteOrderMark(of: body) {
            // A byte order mark names the encoding whatever the label says, as browsers decode (WHATWG Encoding,
            // "decode"); UTF-8's is not text, and String(data:encoding:) would keep it as U+FEFF.
            encoding = marked
            if marked == .utf8 { body = body.dropFirst(3) }
        } else if let known = charset.map(Self.encoding(named:)) ?? .utf8 {
            encoding = known
        } else {
            // Anything but plain ASCII would be guessed (UTF-16 "hi" is valid UTF-8 "h\0i\0").
            guard Self.isPlainASCII(body) else {
                throw CourierError(
                    code: .decodingFailed,
                    stage: .parse,
                    message: "the body's charset \"\((charset ?? "").prefix(40))\" is not one StringParser decodes "
                        + "(UTF-8, ISO-8859-1, US-ASCII, Windows-1252, UTF-16, UTF-32)"
                )
            }
            encoding = .ascii
        }
        // A byte past the last whole UTF-16 or UTF-32 unit is no text (Foundation drops it, or the whole body).
        let unit =
            [.utf32, .utf32LittleEndian, .utf32BigEndian].contains(encoding)
            ? 4 : [.utf16, .utf16LittleEndian, .utf16BigEndian].contains(encoding) ? 2 : 1
        guard body.count % unit == 0, let text = String(data: body, encoding: encoding) else {
            throw CourierError(
                code: .decodingFailed,
                stage: .parse,
                message: "the body is not valid \(charset ?? "utf-8") text"
            )
        }
        return text
    }

    /// The encoding a body's byte order mark names (UTF-8 `EF BB BF`; UTF-32 `00 00 FE FF` or `FF FE 00 00`,
    /// before UTF-16's `FE FF` or `FF FE`, which begins the latter), or `nil`.
    private static func byteOrderMark(of body: Data) -> String.Encoding? {
        let start = body.prefix(4)
        if start.starts(with: [0xEF, 0xBB, 0xBF]) { return .utf8 }
        if start.elementsEqual([0x00, 0x00, 0xFE, 0xFF]) || start.elementsEqual([0xFF, 0xFE, 0x00, 0x00]) {
            return .utf32
        }
        if start.starts(with: [0xFE, 0xFF]) || start.starts(with: [0xFF, 0xFE]) { return .utf16 }
        return nil
    }

    /// Whether `bytes` are ASCII without NUL, which read the same in every charset a server labels text with.
    static func isPlainASCII(_ bytes: some Sequence<UInt8>) -> Bool {
        bytes.allSatisfy { (0x01...0x7F).contains($0) }
    }

    /// The encoding of a charset name (lowercased, as ``charset(of:)`` returns it), or `nil` for one not known here.
    static func encoding(named charset: String) -> String.Encoding? {
        switch charset {
        case "utf-8", "utf8": .utf8
        case "iso-8859-1", "latin1", "iso_8859-1", "l1", "iso8859-1": .isoLatin1
        case "us-ascii", "ascii": .ascii
        case "windows-1252", "cp1252": .windowsCP1252
        case "utf-16": .utf16
        case "utf-16le": .utf16LittleEndian
        case "utf-16be": .utf16BigEndian
        case "utf-32": .utf32
        case "utf-32le": .utf32LittleEndian
        case "utf-32be": .utf32BigEndian
        default: nil
        }
    }

    static func charset(of contentType: String?) -> String? {
        guard let contentType else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let parts = parameter.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset" else {
                continue
            }
            return parts[1].trimmingCharacters(in: CharacterSet(charactersIn: " \"")).lowercased()
        }
        return nil
    }
}

/// Ignores the body: for requests whose `Response` is `Void`.
public struct EmptyParser: ResponseParser {
    /// Creates an empty parser.
    public init() {}

    /// Returns nothing.
    public func parse(_ response: ReceivedResponse, context: ParseContext) throws {}
}

/// A one-line description of a `DecodingError` naming the coding path.
struct DecodingErrorDescription: CustomStringConvertible {
    let error: any Error

    init(_ error: any Error) { self.error = error }

    var description: String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return path.isEmpty ? "the top level" : String(path.drop(while: { $0 == "." }))
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "key '\(key.stringValue)' not found at \(path(context))"
        case .typeMismatch(let type, let context):
            return "expected \(type) at \(path(context)): \(context.debugDescription)"
        case .valueNotFound(let type, let context):
            return "expected \(type) but found null at \(path(context))"
        case .dataCorrupted(let context):
            return "invalid data at \(path(context)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}
