import Foundation

/// A `multipart/form-data` body (RFC 7578): text fields and files, streamed part by part.
///
/// Build the form from ``Part`` values: fields, files from bytes or from disk, and streams. Send it with
/// ``RequestBody/multipart(_:)``, which chooses a fresh boundary for every body it makes and streams the parts
/// without ever holding the whole body in memory: files are read from disk in 64 KiB chunks while the request is
/// written.
///
/// The request carries an exact `Content-Length` when every part's size is known (fields, bytes, files, and
/// streams of known length), and is sent chunked otherwise. It can be sent again (after a 307/308 redirect or for
/// a retry) unless one of its parts is a one-shot stream.
///
/// ```swift
/// var form = MultipartFormData()
/// form.append(.field(name: "title", value: "Holiday"))
/// form.append(.file(name: "photo", fileURL: photoURL))            // image/jpeg, from the extension
/// form.append(.file(name: "notes", filename: "notes.txt", data: Data("hi".utf8)))
///
/// struct UploadPhoto: Request {
///     typealias Response = Photo
///     let form: MultipartFormData
///     var method: HTTPRequest.Method { .post }
///     var path: String { "/photos" }
///     var body: RequestBody? { .multipart(form) }
/// }
/// ```
public struct MultipartFormData: Sendable, ExpressibleByArrayLiteral {
    /// The parts, in the order they are sent.
    public private(set) var parts: [Part]

    /// Creates a form from parts, in order.
    ///
    /// ```swift
    /// let form = MultipartFormData([.field(name: "a", value: "1"), .field(name: "b", value: "2")])
    /// ```
    public init(_ parts: [Part] = []) {
        self.parts = parts
    }

    /// Creates a form from an array literal of parts.
    ///
    /// ```swift
    /// let form: MultipartFormData = [.field(name: "q", value: "swift")]
    /// ```
    public init(arrayLiteral parts: Part...) {
        self.init(parts)
    }

    /// Adds a part after the existing ones.
    ///
    /// ```swift
    /// form.append(.field(name: "comment", value: "Looks good"))
    /// ```
    public mutating func append(_ part: Part) {
        parts.append(part)
    }

    /// Adds parts after the existing ones, in order.
    ///
    /// ```swift
    /// form.append(contentsOf: attachments.map { .file(name: "attachment", fileURL: $0) })
    /// ```
    public mutating func append(contentsOf newParts: some Sequence<Part>) {
        parts.append(contentsOf: newParts)
    }
}

extension RequestBody {
    /// A streamed `multipart/form-data` body with a fresh random boundary.
    ///
    /// The body is built when the request is adapted, on every attempt: each attempt chooses a new boundary (`courier-` and 32 hex digits, 128 bits from the system's
    /// cryptographically secure generator) and checks that it occurs in no part held in memory (fields and
    /// ``MultipartFormData/Part/file(name:filename:contentType:data:)`` bytes), choosing again if it does. Parts
    /// read from disk or from a stream are not scanned: they are never held whole in memory, and a 128-bit random
    /// boundary appears in them by chance with negligible probability.
    ///
    /// The files are opened when the body is read, once per attempt; their sizes are read when it is built, for
    /// `Content-Length`. A file that changes size in between fails the send with
    /// ``CourierError/Code/invalidBody`` instead of sending a body that disagrees with its length.
    ///
    /// ```swift
    /// var body: RequestBody? {
    ///     .multipart([.field(name: "name", value: name), .file(name: "avatar", fileURL: avatarURL)])
    /// }
    /// ```
    ///
    /// - Parameter form: The parts to send.
    /// - Returns: A ``stream(_:contentType:)`` body with `Content-Type: multipart/form-data; boundary=…`.
    ///
    /// A file part that cannot be read (missing, a directory, no permission) fails the call with
    /// ``CourierError/Code/invalidBody``, and a part's content type with a control character with
    /// ``CourierError/Code/invalidHeader``, both at the adapt stage, before anything is sent.
    public static func multipart(_ form: MultipartFormData) -> RequestBody {
        RequestBody(
            kind: .deferred {
                var generator = SystemRandomNumberGenerator()
                let encoded = try MultipartFormData.Encoded(form, generator: &generator)
                return .stream(encoded.body, contentType: encoded.contentType)
            })
    }
}

extension MultipartFormData {
    /// The prefix of every boundary Courier chooses.
    static let boundaryPrefix = "courier-"

    /// How many boundaries are tried before giving up; with a working random generator, one always suffices.
    static let maximumBoundaryAttempts = 16

    /// A boundary with 128 random bits from `generator`: ``boundaryPrefix`` and 32 lowercase hex digits.
    static func randomBoundary(using generator: inout some RandomNumberGenerator) -> String {
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        return boundaryPrefix + hex(high) + hex(low)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
