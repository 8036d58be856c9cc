public import Foundation

/// What a request sends as its body, before encoding: a JSON value, form fields, raw bytes or a stream.
///
/// The body-encoding adapter turns it into bytes with the client's coders (or the one given here) and sets
/// `Content-Type`; the validation step then sets exactly one correct `Content-Length`.
///
/// ```swift
/// var body: RequestBody? { .json(NewUser(name: name)) }
/// var body: RequestBody? { .form(["foo": foo]) }
/// var body: RequestBody? { .bytes(png, contentType: "image/png") }
/// ```
public struct RequestBody: Sendable {
    enum Kind: Sendable {
        case json(any Encodable & Sendable, encoder: JSONEncoder?)
        case form(any Encodable & Sendable, encoder: URLEncodedFormEncoder?)
        case bytes(MessageBody, contentType: String?)
        /// Built when the request is adapted (a file or multipart body), so a failure is a typed error then.
        case deferred(@Sendable () throws -> RequestBody)
    }

    let kind: Kind

    /// A JSON body (`Content-Type: application/json`), encoded with `encoder` or else the client's JSON encoder.
    public static func json(_ value: some Encodable & Sendable, encoder: JSONEncoder? = nil) -> RequestBody {
        RequestBody(kind: .json(value, encoder: encoder))
    }

    /// A form body (`Content-Type: application/x-www-form-urlencoded`), encoded with `encoder` or else the
    /// client's form encoder. `value`'s top level must be keyed: a struct, a dictionary or ``Parameters``.
    public static func form(_ value: some Encodable & Sendable, encoder: URLEncodedFormEncoder? = nil) -> RequestBody {
        RequestBody(kind: .form(value, encoder: encoder))
    }

    /// Raw bytes with the given content type (or none).
    public static func bytes(_ data: Data, contentType: String? = "application/octet-stream") -> RequestBody {
        RequestBody(kind: .bytes(MessageBody(data), contentType: contentType))
    }

    /// Text in the charset `contentType` names: UTF-8 (`text/plain; charset=utf-8`) unless another content type is
    /// given. A `text/*` type without a `charset` gets `; charset=utf-8`: such a type means US-ASCII otherwise
    /// (RFC 2046 §4.1.2), and servers decode it as ISO-8859-1, turning `é` into `Ã©`.
    ///
    /// Another charset (ISO-8859-1, US-ASCII, Windows-1252, UTF-16, UTF-32) encodes the text in it, as labelled; a
    /// character it cannot encode fails the call with ``CourierError/Code/encodingFailed`` before anything is sent,
    /// rather than sending UTF-8 bytes under its label. A charset Courier does not know takes plain ASCII text only.
    public static func text(_ text: String, contentType: String = "text/plain; charset=utf-8") -> RequestBody {
        guard let charset = StringParser.charset(of: contentType), charset != "utf-8", charset != "utf8" else {
            return RequestBody(kind: .bytes(MessageBody(Array(text.utf8)), contentType: labelledUTF8(contentType)))
        }
        return RequestBody(kind: .deferred { try encoded(text, in: charset, contentType: contentType) })
    }

    /// `text` in `charset`, labelled `contentType`; ``CourierError/Code/encodingFailed`` for a character `charset`
    /// has not.
    private static func encoded(_ text: String, in charset: String, contentType: String) throws -> RequestBody {
        let encoding = StringParser.encoding(named: charset)
        // In a charset not known here, only plain ASCII, which StringParser would read back the same.
        let bytes =
            encoding.map { text.data(using: $0, allowLossyConversion: false) }
            ?? (StringParser.isPlainASCII(text.utf8) ? Data(text.utf8) : nil)
        guard let bytes else {
            throw CourierError(
                code: .encodingFailed,
                stage: .adapt,
                message: "the text body has characters its charset \"\(charset.prefix(40))\" cannot encode"
                    + (encoding == nil
                        ? " (Courier encodes only plain ASCII in a charset other than UTF-8, ISO-8859-1, US-ASCII, "
                            + "Windows-1252, UTF-16 and UTF-32)" : "")
            )
        }
        return .bytes(bytes, contentType: contentType)
    }

    /// `contentType`, with `; charset=utf-8` when it is a `text/*` type without a charset.
    private static func labelledUTF8(_ contentType: String) -> String {
        let lowercased = contentType.lowercased()
        guard lowercased.hasPrefix("text/"), !lowercased.contains("charset=") else { return contentType }
        return contentType + "; charset=utf-8"
    }

    /// A streamed body. A one-shot stream is never re-sent: a retry or a 307/308 redirect that would need it is not
    /// made, and the response or error comes back as it is; a custom decision that restarts the call fails it with
    /// ``CourierError/Code/bodyNotReplayable``.
    public static func stream(_ body: MessageBody, contentType: String? = "application/octet-stream") -> RequestBody {
        RequestBody(kind: .bytes(body, contentType: contentType))
    }
}
