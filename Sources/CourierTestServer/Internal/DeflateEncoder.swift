#if TestServer
    /// Just enough DEFLATE (RFC 1951) to produce gzip (RFC 1952) and zlib (RFC 1950) bodies without zlib.
    ///
    /// Ordinary bodies use stored (uncompressed) blocks, which every inflater accepts. The gzip bomb uses one dynamic
    /// Huffman block in which "copy 258 bytes from distance 1" costs two bits, which is DEFLATE's best ratio (~1030:1),
    /// the same that zlib reaches on zeros.
    enum DeflateEncoder {
        /// `bytes` wrapped as a gzip member with stored blocks.
        static func gzip(_ bytes: [UInt8]) -> [UInt8] {
            var output = gzipHeader
            output += storedBlocks(bytes)
            output += littleEndian(Checksums.crc32(bytes))
            output += littleEndian(UInt32(truncatingIfNeeded: bytes.count))
            return output
        }

        /// `bytes` wrapped as a zlib stream with stored blocks (what httpbin's `/deflate` sends).
        static func zlib(_ bytes: [UInt8]) -> [UInt8] {
            var output: [UInt8] = [0x78, 0x01]
            output += storedBlocks(bytes)
            let adler = Checksums.adler32(bytes)
            output += [UInt8(adler >> 24), UInt8(adler >> 16 & 0xFF), UInt8(adler >> 8 & 0xFF), UInt8(adler & 0xFF)]
            return output
        }

        /// A gzip member that inflates to `size` zero bytes; about `size / 1030` bytes long.
        static func gzipOfZeros(size: Int) -> [UInt8] {
            var writer = BitWriter()
            writeBombHeader(into: &writer)
            if size > 0 {
                writer.writeCode(0b10, length: 2)  // literal 0
                var remaining = size - 1
                while remaining >= 258 {
                    writer.writeCode(0b0, length: 1)  // length 258 (symbol 285)
                    writer.writeCode(0b0, length: 1)  // distance 1 (distance symbol 0)
                    remaining -= 258
                }
                for _ in 0..<remaining {
                    writer.writeCode(0b10, length: 2)
                }
            }
            writer.writeCode(0b11, length: 2)  // end of block (symbol 256)
            var output = gzipHeader
            output += writer.finish()
            output += littleEndian(Checksums.crc32OfZeros(count: size))
            output += littleEndian(UInt32(truncatingIfNeeded: size))
            return output
        }

        private static let gzipHeader: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xFF]

        private static func storedBlocks(_ bytes: [UInt8]) -> [UInt8] {
            var output: [UInt8] = []
            output.reserveCapacity(bytes.count + bytes.count / 65_535 * 5 + 5)
            var start = 0
            repeat {
                let end = min(start + 65_535, bytes.count)
                let length = UInt16(end - start)
                output.append(end == bytes.count ? 0x01 : 0x00)
                output += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
                output += bytes[start..<end]
                start = end
            } while start < bytes.count
            return output
        }

        /// Block header with literal/length codes {285: "0", 0: "10", 256: "11"} and distance codes {0: "0", 1: "1"}.
        private static func writeBombHeader(into writer: inout BitWriter) {
            writer.writeBits(1, count: 1)  // BFINAL
            writer.writeBits(2, count: 2)  // BTYPE = dynamic Huffman
            writer.writeBits(286 - 257, count: 5)  // HLIT
            writer.writeBits(2 - 1, count: 5)  // HDIST
            writer.writeBits(18 - 4, count: 4)  // HCLEN: code-length codes up to symbol 1 in the permuted order
            // Code-length code lengths in the order 16 17 18 0 8 7 9 6 10 5 11 4 12 3 13 2 14 1: 18→1, 2→2, 1→2,
            // giving canonical codes 18: "0", 1: "10", 2: "11".
            for length in [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2] as [UInt32] {
                writer.writeBits(length, count: 3)
            }
            let two = (code: UInt32(0b11), length: 2)
            let one = (code: UInt32(0b10), length: 2)
            func zeros(_ count: UInt32) {
                writer.writeCode(0b0, length: 1)  // symbol 18: repeat zero 11–138 times
                writer.writeBits(count - 11, count: 7)
            }
            writer.writeCode(two.code, length: two.length)  // literal 0 has length 2
            zeros(138)  // literals 1…138
            zeros(117)  // literals 139…255
            writer.writeCode(two.code, length: two.length)  // 256 (end of block) has length 2
            zeros(28)  // 257…284
            writer.writeCode(one.code, length: one.length)  // 285 (length 258) has length 1
            writer.writeCode(one.code, length: one.length)  // distance 0 has length 1
            writer.writeCode(one.code, length: one.length)  // distance 1 has length 1
        }

        private static func littleEndian(_ value: UInt32) -> [UInt8] {
            [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
        }
    }

    /// Writes DEFLATE's bit stream: values least-significant bit first, Huffman codes most-significant bit first.
    private struct BitWriter {
        private var bytes: [UInt8] = []
        private var current: UInt32 = 0
        private var used: UInt32 = 0

        mutating func writeBits(_ value: UInt32, count: Int) {
            for index in 0..<count {
                append(value >> UInt32(index) & 1)
            }
        }

        mutating func writeCode(_ code: UInt32, length: Int) {
            for index in (0..<length).reversed() {
                append(code >> UInt32(index) & 1)
            }
        }

        mutating func finish() -> [UInt8] {
            if used > 0 {
                bytes.append(UInt8(current))
            }
            return bytes
        }

        private mutating func append(_ bit: UInt32) {
            current |= bit << used
            used += 1
            if used == 8 {
                bytes.append(UInt8(current))
                current = 0
                used = 0
            }
        }
    }
#endif
