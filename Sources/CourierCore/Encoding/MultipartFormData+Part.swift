public import Foundation

extension MultipartFormData {
    /// One part of a ``MultipartFormData``: a text field, or a file from bytes, from disk or from a stream.
    ///
    /// Names and filenames are written as WHATWG HTML does: `"`, CR and LF become `%22`, `%0D` and `%0A`; every
    /// other character is sent as UTF-8. There is no RFC 5987 `filename*` (RFC 7578 §4.2 forbids it). A filename
    /// keeps only its last path component, so `../../etc/passwd` is sent as `passwd` (both `/` and `\` separate
    /// components). A file part without a content type gets one from its filename's extension, or
    /// `application/octet-stream`; a field has none.
    ///
    /// ```swift
    /// let form: MultipartFormData = [
    ///     .field(name: "caption", value: "Sunset"),
    ///     .file(name: "photo", fileURL: URL(fileURLWithPath: "/tmp/sunset.jpg")),
    /// ]
    /// ```
    public struct Part: Sendable {
        /// The form field's name, as given (escaped only when written).
        public let name: String
        /// The filename as sent, without any directory; `nil` for a field.
        public let filename: String?
        /// The part's `Content-Type`: the one given, or the one guessed from the filename; `nil` for a field.
        public let contentType: String?

        let content: Content

        enum Content: Sendable {
            case bytes([UInt8])
            case file(URL)
            case body(MessageBody)
        }

        private init(name: String, filename: String?, contentType: String?, content: Content) {
            self.name = name
            self.filename = filename
            self.contentType = contentType
            self.content = content
        }

        /// A text field, sent as UTF-8 without a `Content-Type`.
        ///
        /// ```swift
        /// form.append(.field(name: "email", value: "ada@example.com"))
        /// ```
        ///
        /// - Parameters:
        ///   - name: The field's name.
        ///   - value: The field's value.
        /// - Returns: The part.
        public static func field(name: String, value: String) -> Part {
            Part(name: name, filename: nil, contentType: nil, content: .bytes(Array(value.utf8)))
        }

        /// A file from bytes in memory.
        ///
        /// ```swift
        /// form.append(.file(name: "report", filename: "report.csv", data: csvData))   // text/csv
        /// ```
        ///
        /// - Parameters:
        ///   - name: The field's name.
        ///   - filename: The filename sent; any directory is removed.
        ///   - contentType: The part's content type; `nil` guesses it from `filename`'s extension.
        ///   - data: The file's content.
        /// - Returns: The part.
        public static func file(name: String, filename: String, contentType: String? = nil, data: Data) -> Part {
            let sent = sanitizedFilename(filename)
            return Part(
                name: name,
                filename: sent,
                contentType: contentType ?? guessedContentType(forFilename: sent),
                content: .bytes([UInt8](data))
            )
        }

        /// A file streamed from disk in 64 KiB chunks; its size, read by ``RequestBody/multipart(_:)``, counts
        /// towards `Content-Length`. The part is replayable (every send reads the file again) unless the file is a
        /// named pipe, which makes the form chunked and one-shot.
        ///
        /// ```swift
        /// form.append(.file(name: "video", fileURL: movieURL))                        // video/mp4
        /// form.append(.file(name: "log", fileURL: logURL, filename: "today.log", contentType: "text/plain"))
        /// ```
        ///
        /// - Parameters:
        ///   - name: The field's name.
        ///   - fileURL: The file to send.
        ///   - filename: The filename sent; `nil` sends the file's own name. Any directory is removed.
        ///   - contentType: The part's content type; `nil` guesses it from the filename's extension.
        /// - Returns: The part.
        public static func file(
            name: String,
            fileURL: URL,
            filename: String? = nil,
            contentType: String? = nil
        ) -> Part {
            let sent = sanitizedFilename(filename ?? fileURL.lastPathComponent)
            return Part(
                name: name,
                filename: sent,
                contentType: contentType ?? guessedContentType(forFilename: sent),
                content: .file(fileURL)
            )
        }

        /// A part streamed from a ``MessageBody``, with the body's length and replayability.
        ///
        /// A body of unknown length makes the whole form chunked; a one-shot body makes it one-shot.
        ///
        /// ```swift
        /// let chunks = MessageBody(upstream, length: .known(size), iterationBehavior: .single)
        /// form.append(.stream(name: "backup", filename: "backup.tar.gz", body: chunks))   // application/gzip
        /// ```
        ///
        /// - Parameters:
        ///   - name: The field's name.
        ///   - filename: The filename sent, or `nil` for none. Any directory is removed.
        ///   - contentType: The part's content type; `nil` guesses it from `filename`, or else uses
        ///     `application/octet-stream`.
        ///   - body: The content. When its length is known, it must yield exactly that many bytes, or the send
        ///     fails with ``CourierError/Code/invalidBody``.
        /// - Returns: The part.
        public static func stream(
            name: String,
            filename: String? = nil,
            contentType: String? = nil,
            body: MessageBody
        ) -> Part {
            let sent = filename.map(sanitizedFilename)
            return Part(
                name: name,
                filename: sent,
                contentType: contentType ?? guessedContentType(forFilename: sent ?? ""),
                content: .body(body)
            )
        }

        /// A one-shot part streamed from an asynchronous sequence of byte chunks.
        ///
        /// The sequence is read once: a form holding this part cannot be sent again after a redirect or for a
        /// retry (the send fails with ``CourierError/Code/bodyNotReplayable``). For a sequence that can restart,
        /// wrap it in a ``MessageBody`` with `iterationBehavior: .multiple` and use
        /// ``stream(name:filename:contentType:body:)``.
        ///
        /// ```swift
        /// form.append(.stream(name: "audio", filename: "take1.wav", length: .unknown, body: recorder.chunks))
        /// ```
        ///
        /// - Parameters:
        ///   - name: The field's name.
        ///   - filename: The filename sent, or `nil` for none. Any directory is removed.
        ///   - contentType: The part's content type; `nil` guesses it from `filename`, or else uses
        ///     `application/octet-stream`.
        ///   - length: The number of bytes `body` yields, if known; `.unknown` sends the whole form chunked.
        ///   - body: The chunks, in order.
        /// - Returns: The part.
        public static func stream<Bytes: AsyncSequence & Sendable>(
            name: String,
            filename: String? = nil,
            contentType: String? = nil,
            length: MessageBody.Length,
            body: Bytes
        ) -> Part where Bytes.Element == ArraySlice<UInt8> {
            stream(
                name: name,
                filename: filename,
                contentType: contentType,
                body: MessageBody(body, length: length, iterationBehavior: .single)
            )
        }
    }
}

extension MultipartFormData.Part {
    /// The last path component of `filename`, with both `/` and `\` as separators.
    ///
    /// `.` and `..` name directories, not files, so they become an empty filename. The separators are found among the
    /// Unicode scalars, not the `Character`s: a combining mark after a `/` makes one `Character` of both
    /// (`"../\u{301}x"`), which a search by `Character` did not split, and the server got the `../`.
    static func sanitizedFilename(_ filename: String) -> String {
        let scalars = filename.unicodeScalars
        let start = scalars.lastIndex { $0 == "/" || $0 == "\\" }.map(scalars.index(after:)) ?? scalars.startIndex
        let last = String(scalars[start...])
        return last == "." || last == ".." ? "" : last
    }

    /// The content type for `filename`'s extension (case-insensitive), or `application/octet-stream`.
    static func guessedContentType(forFilename filename: String) -> String {
        guard let dot = filename.lastIndex(of: "."), dot != filename.startIndex else {
            return "application/octet-stream"
        }
        let pathExtension = filename[filename.index(after: dot)...].lowercased()
        return contentTypes[pathExtension] ?? "application/octet-stream"
    }

    private static let contentTypes: [String: String] = [
        "txt": "text/plain",
        "html": "text/html",
        "htm": "text/html",
        "json": "application/json",
        "xml": "application/xml",
        "csv": "text/csv",
        "png": "image/png",
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "gif": "image/gif",
        "webp": "image/webp",
        "svg": "image/svg+xml",
        "pdf": "application/pdf",
        "zip": "application/zip",
        "gz": "application/gzip",
        "mp4": "video/mp4",
        "mp3": "audio/mpeg",
        "wav": "audio/wav",
    ]

    /// The part's header block: the `--boundary` line, `Content-Disposition`, `Content-Type` if any, a blank line.
    ///
    /// - Throws: ``CourierError/Code/invalidHeader`` when the content type holds a control character.
    func head(boundary: String) throws -> [UInt8] {
        var bytes = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"".utf8)
        Self.appendEscaped(name, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
        if let filename {
            bytes.append(contentsOf: "; filename=\"".utf8)
            Self.appendEscaped(filename, to: &bytes)
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(contentsOf: "\r\n".utf8)
        if let contentType {
            let value = try HeaderValidation.validatedValue(contentType, for: "Content-Type")
            bytes.append(contentsOf: "Content-Type: \(value)\r\n".utf8)
        }
        bytes.append(contentsOf: "\r\n".utf8)
        return bytes
    }

    /// WHATWG HTML's escaping of names and filenames: `"` → `%22`, CR → `%0D`, LF → `%0A`, nothing else.
    ///
    /// ``PercentEncoding`` is not used: it would also encode `%`, spaces and every non-ASCII byte, which browsers
    /// (and so servers) do not expect here.
    static func appendEscaped(_ text: String, to bytes: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: "%22".utf8)
            case UInt8(ascii: "\r"): bytes.append(contentsOf: "%0D".utf8)
            case UInt8(ascii: "\n"): bytes.append(contentsOf: "%0A".utf8)
            default: bytes.append(byte)
            }
        }
    }
}
