/// CRC-32 (IEEE 802.3, the polynomial of zlib and PNG), to detect a disk cache entry that was corrupted or only
/// half written. Not a defence against tampering: the cache directory is the user's own.
package enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 {
            value = value & 1 == 1 ? 0xedb8_8320 ^ (value >> 1) : value >> 1
        }
        return value
    }

    /// The checksum of `bytes`, continuing from `initial` (the checksum of the bytes before them).
    package static func checksum(_ bytes: some Sequence<UInt8>, continuing initial: UInt32 = 0) -> UInt32 {
        var crc = ~initial
        for byte in bytes {
            crc = table[Int((crc ^ UInt32(byte)) & 0xff)] ^ (crc >> 8)
        }
        return ~crc
    }
}
