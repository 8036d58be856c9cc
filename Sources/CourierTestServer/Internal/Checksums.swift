#if TestServer
    /// CRC-32 (as gzip uses it) and Adler-32 (as zlib uses it), written out because zlib is not importable here.
    enum Checksums {
        private static let table: [UInt32] = (0..<256).map { index in
            var value = UInt32(index)
            for _ in 0..<8 {
                value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1
            }
            return value
        }

        /// The CRC-32 of `bytes`.
        static func crc32(_ bytes: some Sequence<UInt8>) -> UInt32 {
            var register: UInt32 = 0xFFFF_FFFF
            for byte in bytes {
                register = table[Int((register ^ UInt32(byte)) & 0xFF)] ^ (register >> 8)
            }
            return ~register
        }

        /// The CRC-32 of `count` zero bytes, in O(log count) time.
        ///
        /// Feeding one zero byte into the CRC register is a linear map over GF(2); this raises its 32×32 matrix to
        /// the `count`-th power by repeated squaring, as zlib's `crc32_combine` does.
        static func crc32OfZeros(count: Int) -> UInt32 {
            var matrix: [UInt32] = (0..<32).map { bit in
                let register = UInt32(1) << UInt32(bit)
                return table[Int(register & 0xFF)] ^ (register >> 8)
            }
            var register: UInt32 = 0xFFFF_FFFF
            var remaining = count
            while remaining > 0 {
                if remaining & 1 == 1 {
                    register = apply(matrix, to: register)
                }
                matrix = matrix.map { apply(matrix, to: $0) }
                remaining >>= 1
            }
            return ~register
        }

        /// The Adler-32 of `bytes`.
        static func adler32(_ bytes: some Sequence<UInt8>) -> UInt32 {
            var low: UInt32 = 1
            var high: UInt32 = 0
            for byte in bytes {
                low = (low + UInt32(byte)) % 65_521
                high = (high + low) % 65_521
            }
            return high << 16 | low
        }

        private static func apply(_ matrix: [UInt32], to vector: UInt32) -> UInt32 {
            var result: UInt32 = 0
            var bits = vector
            var column = 0
            while bits != 0 {
                if bits & 1 == 1 {
                    result ^= matrix[column]
                }
                bits >>= 1
                column += 1
            }
            return result
        }
    }
#endif
