// libFuzzer entry point for the streaming parsers, built and run by scripts/fuzz-streaming.
//
// The first three bytes of an input choose the limits and the seed of the chunking; the rest is the stream. For
// each input it checks that:
// - EventStreamParser gives the same events, error code, last event ID and reconnection time fed in one piece, byte
//   by byte, and in random chunks (some empty);
// - with no limit firing, those events are the ones a plain reference reading of the WHATWG rules gives (the whole
//   stream decoded first, then split into lines);
// - emitted events respect the limits (at least one input byte per scalar of their data);
// - after finish(), the parser reads a stream as a new one seeded with its last event ID does;
// - LineSplitter gives the same lines and error code whatever the chunking, and the reference's lines.

/// SplitMix64: a small deterministic generator for chunk sizes.
struct SplitMix64 {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// What one way of feeding a stream gave.
struct Outcome: Equatable {
    var events: [ServerSentEvent] = []
    var error: CourierError.Code?
    var lastEventID: String?
    var reconnectionTime: Duration?
}

func fail(_ message: String) -> Never {
    fatalError("FUZZ INVARIANT BROKEN: \(message)")
}

func chunks(of bytes: ArraySlice<UInt8>, seed: UInt64) -> [ArraySlice<UInt8>] {
    var random = SplitMix64(state: seed)
    var result: [ArraySlice<UInt8>] = []
    var start = bytes.startIndex
    while start < bytes.endIndex {
        let size = Int(random.next() % 40) - 4  // some empty chunks
        let end = min(bytes.endIndex, start + max(0, size))
        result.append(bytes[start..<end])
        start = end
    }
    return result
}

func parseEvents(_ pieces: [ArraySlice<UInt8>], parser: inout EventStreamParser) -> Outcome {
    var outcome = Outcome()
    do {
        for piece in pieces { try parser.parse(piece) { outcome.events.append($0) } }
        parser.finish()
    } catch let error as CourierError {
        outcome.error = error.code
    } catch {
        fail("unexpected error \(error)")
    }
    outcome.lastEventID = outcome.error == nil ? parser.lastEventID : nil
    outcome.reconnectionTime = outcome.error == nil ? parser.reconnectionTime : nil
    return outcome
}

/// The WHATWG rules read plainly: decode everything, strip one BOM, split on CRLF, LF or CR, interpret.
func referenceEvents(_ bytes: ArraySlice<UInt8>) -> Outcome {
    var scalars = Array(String(decoding: bytes, as: UTF8.self).unicodeScalars)
    if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
    var outcome = Outcome()
    var data = ""
    var type = ""
    var idBuffer = ""
    var retry: Duration?
    var lineStart = 0
    var index = 0
    func interpret(_ line: ArraySlice<Unicode.Scalar>) {
        if line.isEmpty {
            outcome.lastEventID = idBuffer.isEmpty ? nil : idBuffer
            if !data.isEmpty {
                data.removeLast()
                outcome.events.append(
                    ServerSentEvent(
                        id: outcome.lastEventID, type: type.isEmpty ? "message" : type, data: data, retry: retry))
            }
            data = ""
            type = ""
            retry = nil
            return
        }
        if line.first == ":" { return }
        let colon = line.firstIndex(of: ":")
        let name = String(String.UnicodeScalarView(line[line.startIndex..<(colon ?? line.endIndex)]))
        var value = colon.map { line[($0 + 1)...] } ?? []
        if value.first == " " { value.removeFirst() }
        let text = String(String.UnicodeScalarView(value))
        switch name {
        case "data": data += text + "\n"
        case "event": type = text
        case "id" where !text.unicodeScalars.contains("\u{0}"): idBuffer = text
        case "retry" where !text.isEmpty && text.unicodeScalars.allSatisfy({ $0 >= "0" && $0 <= "9" }):
            if let value = Int64(text) {
                retry = .milliseconds(value)
                outcome.reconnectionTime = retry
            }
        default: break
        }
    }
    while index < scalars.count {
        let scalar = scalars[index]
        if scalar == "\r" || scalar == "\n" {
            interpret(scalars[lineStart..<index])
            if scalar == "\r", index + 1 < scalars.count, scalars[index + 1] == "\n" { index += 1 }
            lineStart = index + 1
        }
        index += 1
    }
    return outcome
}

/// At least how many input bytes made `text`: one per U+FFFD, the UTF-8 length of any other scalar.
func minimumSourceBytes(_ text: String) -> Int {
    text.unicodeScalars.reduce(0) { $0 + ($1 == "\u{FFFD}" ? 1 : UTF8.width($1)) }
}

func checkEvents(_ stream: ArraySlice<UInt8>, limits: StreamLimits, seed: UInt64) {
    var oneShotParser = EventStreamParser(limits: limits)
    let oneShot = parseEvents([stream], parser: &oneShotParser)
    var byteParser = EventStreamParser(limits: limits)
    let byByte = parseEvents(stream.indices.map { stream[$0...$0] }, parser: &byteParser)
    var chunkParser = EventStreamParser(limits: limits)
    let chunked = parseEvents(chunks(of: stream, seed: seed), parser: &chunkParser)
    guard oneShot == byByte else { fail("byte by byte: \(byByte) != one shot: \(oneShot)") }
    guard oneShot == chunked else { fail("chunked: \(chunked) != one shot: \(oneShot)") }
    for event in oneShot.events {
        guard minimumSourceBytes(event.data) <= limits.maximumEventSize else { fail("event over the limit: \(event)") }
        guard event.type == "message" || minimumSourceBytes(event.type) <= limits.maximumLineLength else {
            fail("type over the limit: \(event)")
        }
        guard minimumSourceBytes(event.id ?? "") <= limits.maximumLineLength else { fail("id over the limit") }
        guard event.id != "" else { fail("an empty id") }
    }
    if oneShot.error == nil {
        let reference = referenceEvents(stream)
        guard oneShot == reference else { fail("parser: \(oneShot) != reference: \(reference)") }
        // The next connection's stream reads as in a new parser seeded with the last event ID.
        var seeded = EventStreamParser(limits: limits, lastEventID: oneShotParser.lastEventID)
        let again = parseEvents([stream], parser: &oneShotParser)
        let fresh = parseEvents([stream], parser: &seeded)
        guard again.events == fresh.events, again.error == fresh.error else { fail("finish() left state behind") }
    }
}

func splitLines(_ pieces: [ArraySlice<UInt8>], limits: StreamLimits) -> ([[UInt8]], CourierError.Code?) {
    var splitter = LineSplitter(limits: limits)
    var lines: [[UInt8]] = []
    do {
        for piece in pieces { try splitter.split(piece) { lines.append($0) } }
        try splitter.finish { lines.append($0) }
        guard splitter.lineCount >= lines.count else { fail("lineCount \(splitter.lineCount) < \(lines.count)") }
    } catch let error as CourierError {
        return (lines, error.code)
    } catch {
        fail("unexpected error \(error)")
    }
    return (lines, nil)
}

func checkLines(_ stream: ArraySlice<UInt8>, limits: StreamLimits, seed: UInt64) {
    let oneShot = splitLines([stream], limits: limits)
    let byByte = splitLines(stream.indices.map { stream[$0...$0] }, limits: limits)
    let chunked = splitLines(chunks(of: stream, seed: seed), limits: limits)
    guard oneShot == byByte else { fail("lines byte by byte: \(byByte) != one shot: \(oneShot)") }
    guard oneShot == chunked else { fail("lines chunked: \(chunked) != one shot: \(oneShot)") }
    for line in oneShot.0 where line.count > limits.maximumLineLength { fail("a line over the limit: \(line.count)") }
    var reference = stream.split(separator: 0x0A, omittingEmptySubsequences: false).map { Array($0) }
    if reference.last?.isEmpty == true { reference.removeLast() }
    reference = reference.map { $0.last == 0x0D ? Array($0.dropLast()) : $0 }
    if oneShot.1 == nil {
        guard oneShot.0 == reference else { fail("lines: \(oneShot.0) != reference: \(reference)") }
    } else {
        guard reference.contains(where: { $0.count > limits.maximumLineLength }) else { fail("a limit fired early") }
    }
}

/// libFuzzer's entry point: checks one input (see the top of this file).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStreaming(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size >= 3 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    // Small limits half the time, so they fire often; the default ones otherwise.
    let small = input[0] & 0x80 != 0
    let limits =
        small
        ? StreamLimits(maximumLineLength: Int(input[0] & 0x3F), maximumEventSize: Int(input[1] & 0x7F))
        : StreamLimits.standard
    let stream = input[3...]
    let seed = UInt64(input[2]) | UInt64(size) << 8
    checkEvents(stream, limits: limits, seed: seed)
    checkLines(stream, limits: limits, seed: seed)
    return 0
}
