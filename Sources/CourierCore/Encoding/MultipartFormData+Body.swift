import Foundation

extension MultipartFormData {
    /// A form turned into a streamed ``MessageBody`` with one boundary.
    ///
    /// Headers, fields and small in-memory parts are laid out here; files and streams stay references and are read
    /// chunk by chunk when the body is iterated.
    struct Encoded: Sendable {
        /// The boundary, without the leading `--`.
        let boundary: String
        /// The body: exact length when every part's size is known; one-shot when any part is.
        let body: MessageBody

        /// The request's `Content-Type`.
        var contentType: String { "multipart/form-data; boundary=\(boundary)" }

        /// Encodes `form` with a boundary drawn from `generator` (the system CSPRNG outside tests).
        ///
        /// - Throws: ``CourierError/Code/invalidBody`` when a file cannot be read or no boundary absent from the
        ///   in-memory parts was found in ``MultipartFormData/maximumBoundaryAttempts`` draws;
        ///   ``CourierError/Code/invalidHeader`` when a part's content type holds a control character.
        init(_ form: MultipartFormData, generator: inout some RandomNumberGenerator) throws {
            // Boundaries are drawn from a local copy, written back on every exit: the same draws, and the caller's
            // generator ends in the same state. Why: under `-sanitize=thread`, Swift instruments each `&generator`
            // in this unspecialized generic code with `__tsan_external_write(address)`, but a caller whose generator
            // is an empty struct (`SystemRandomNumberGenerator`) passes no address for it (the register holds
            // whatever was left there). The sanitizer then crashed on that junk: `SEGV in __tsan::MemoryAccess` <-
            // `__tsan::ExternalAccess` <- `Encoded.init` at the `chooseBoundary` line <- a test's
            // `var generator = SystemRandomNumberGenerator()`. A compiler bug, not a race (it reproduces on one
            // thread; swiftlang/swift#35579 skips the call only where the type is known to be empty). A local copy
            // always has a real address; its write-back goes through the value witness, which is not instrumented.
            var draws = generator
            defer { generator = draws }
            let contents = try form.parts.map { try Self.resolve($0) }
            let boundary = try Self.chooseBoundary(for: form.parts, using: &draws)
            var segments: [MultipartSegment] = []
            var pending: [UInt8] = []
            var total: Int64? = 0  // the streamed parts' lengths; in-memory segments are added at the end
            var iterationBehavior = MessageBody.IterationBehavior.multiple

            func flush() {
                if !pending.isEmpty {
                    segments.append(.bytes(ArraySlice(pending)))
                    pending = []
                }
            }

            for (part, content) in zip(form.parts, contents) {
                pending.append(contentsOf: try part.head(boundary: boundary))
                switch content {
                case .bytes(let bytes) where bytes.count <= Self.inlineLimit:
                    pending.append(contentsOf: bytes)
                case .bytes(let bytes):
                    flush()
                    segments.append(.bytes(ArraySlice(bytes)))
                case .body(let body):
                    flush()
                    segments.append(.body(body, name: part.name))
                    if let sum = total, let count = body.length.knownCount {
                        total = try Self.adding(count, to: sum, part: part.name)
                    } else {
                        total = nil
                    }
                    if body.iterationBehavior == .single { iterationBehavior = .single }
                }
                pending.append(contentsOf: Self.crlf)
            }
            pending.append(contentsOf: "--\(boundary)--\r\n".utf8)
            flush()
            if let sum = total {
                total = try Self.adding(segments.reduce(0) { $0 + Int64($1.inMemoryCount) }, to: sum, part: nil)
            }

            self.boundary = boundary
            self.body = MessageBody(
                MultipartChunks(segments: segments),
                length: total.map { .known($0) } ?? .unknown,
                iterationBehavior: iterationBehavior
            )
        }

        /// `sum + count`, or ``CourierError/Code/invalidBody`` for a negative length or a total past `Int64.max`
        /// (a stream declared `.known(.max)`), instead of a trap.
        private static func adding(_ count: Int64, to sum: Int64, part: String?) throws -> Int64 {
            let (total, overflow) = sum.addingReportingOverflow(count)
            guard count >= 0, !overflow else {
                let which = part.map { "part \"\($0.prefix(64))\" declares" } ?? "the form's parts declare"
                throw CourierError(
                    code: .invalidBody,
                    stage: .adapt,
                    message: "the multipart body cannot be framed: \(which) a length (\(count)) that is negative or "
                        + "makes the body longer than \(Int64.max) bytes"
                )
            }
            return total
        }

        /// In-memory content up to this size is copied next to its headers; larger content is its own segment.
        static let inlineLimit = 16 * 1024

        private static let crlf = Array("\r\n".utf8)

        private enum Resolved {
            case bytes([UInt8])
            case body(MessageBody)
        }

        private static func resolve(_ part: Part) throws -> Resolved {
            switch part.content {
            case .bytes(let bytes): return .bytes(bytes)
            case .body(let body): return .body(body)
            case .file(let url): return .body(try fileBody(url, name: part.name))
            }
        }

        private static func fileBody(_ url: URL, name: String) throws -> MessageBody {
            let size = try MessageBody.uploadableFileSize(at: url) { reason, error in
                CourierError(
                    code: .invalidBody,
                    stage: .adapt,
                    message: "cannot read the file for multipart part '\(name)' at \(url.path): \(reason)",
                    underlyingError: error
                )
            }
            return MessageBody(
                FileChunks(url: url, chunkSize: MultipartChunks.chunkSize),
                length: size.map { .known($0) } ?? .unknown,
                // A named pipe gives its bytes once (see `MessageBody.file(at:chunkSize:)`).
                iterationBehavior: size == nil ? .single : .multiple
            )
        }

        /// Draws boundaries until one occurs in no in-memory part (names, filenames, content types, content).
        private static func chooseBoundary(
            for parts: [Part],
            using generator: inout some RandomNumberGenerator
        ) throws -> String {
            for _ in 0..<MultipartFormData.maximumBoundaryAttempts {
                let boundary = MultipartFormData.randomBoundary(using: &generator)
                if !parts.contains(where: { $0.contains(Array(boundary.utf8)) }) {
                    return boundary
                }
            }
            throw CourierError(
                code: .invalidBody,
                stage: .adapt,
                message: "no multipart boundary absent from the content was found; is the random generator broken?"
            )
        }
    }
}

extension MultipartFormData.Part {
    /// Whether `needle` occurs in the part's headers or in-memory content (file and stream content is not read).
    fileprivate func contains(_ needle: [UInt8]) -> Bool {
        let texts = [name, filename ?? "", contentType ?? ""]
        if texts.contains(where: { ByteSearch.contains(needle, in: Array($0.utf8)) }) {
            return true
        }
        if case .bytes(let bytes) = content {
            return ByteSearch.contains(needle, in: bytes)
        }
        return false
    }
}

/// One stretch of a multipart body: bytes in memory, or a part's streamed content.
enum MultipartSegment: Sendable {
    case bytes(ArraySlice<UInt8>)
    case body(MessageBody, name: String)

    var inMemoryCount: Int {
        if case .bytes(let bytes) = self { return bytes.count }
        return 0
    }
}

/// The chunks of a multipart body, segment by segment; in-memory bytes are handed out in 64 KiB slices.
///
/// A streamed part whose length is known must yield exactly that many bytes; otherwise iteration throws
/// ``CourierError/Code/invalidBody`` rather than send a body that disagrees with its `Content-Length`.
struct MultipartChunks: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>

    /// The largest chunk read from a file or handed out from memory.
    static let chunkSize = 64 * 1024

    let segments: [MultipartSegment]

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(segments: segments) }

    struct AsyncIterator: AsyncIteratorProtocol {
        private let segments: [MultipartSegment]
        private var index = 0
        private var pending: ArraySlice<UInt8> = []
        private var current: Streaming?

        private struct Streaming {
            var iterator: MessageBody.AsyncIterator
            let name: String
            let expected: Int64?
            var count: Int64 = 0
        }

        init(segments: [MultipartSegment]) {
            self.segments = segments
        }

        mutating func next() async throws -> ArraySlice<UInt8>? {
            while true {
                if !pending.isEmpty {
                    let piece = pending.prefix(MultipartChunks.chunkSize)
                    pending = pending.dropFirst(piece.count)
                    return piece
                }
                if var streaming = current {
                    let chunk = try await streaming.iterator.next()
                    if let chunk {
                        streaming.count += Int64(chunk.count)
                        try Self.check(streaming, finished: false)
                        current = streaming
                        if !chunk.isEmpty { return chunk }
                        continue
                    }
                    try Self.check(streaming, finished: true)
                    current = nil
                }
                guard index < segments.count else { return nil }
                try Task.checkCancellation()
                switch segments[index] {
                case .bytes(let bytes):
                    pending = bytes
                case .body(let body, let name):
                    current = Streaming(
                        iterator: body.makeAsyncIterator(),
                        name: name,
                        expected: body.length.knownCount
                    )
                }
                index += 1
            }
        }

        private static func check(_ streaming: Streaming, finished: Bool) throws {
            guard let expected = streaming.expected else { return }
            if streaming.count > expected || (finished && streaming.count != expected) {
                throw CourierError(
                    code: .invalidBody,
                    stage: .transport,
                    message: "multipart part '\(streaming.name)' yielded \(finished ? "" : "at least ")"
                        + "\(streaming.count) bytes but announced \(expected)"
                )
            }
        }
    }
}
