/// Finding a run of bytes inside a larger one.
///
/// The standard library's `firstRange(of:)` on `[UInt8]` is generic over collections and allocates as it goes:
/// over 64 KiB it took 4 ms and 132,000 `malloc`s (the `CourierMicro` benchmark). This scan checks the first byte,
/// then compares the rest in place, which is what a multipart boundary check over megabytes of content needs.
enum ByteSearch {
    /// Whether `needle` occurs anywhere in `haystack`. An empty needle occurs in everything.
    static func contains(_ needle: [UInt8], in haystack: [UInt8]) -> Bool {
        haystack.withUnsafeBytes { hay in
            needle.withUnsafeBytes { pin in contains(pin, in: hay) }
        }
    }

    /// Whether `needle` occurs anywhere in `haystack`. An empty needle occurs in everything.
    static func contains(_ needle: UnsafeRawBufferPointer, in haystack: UnsafeRawBufferPointer) -> Bool {
        guard let first = needle.first else { return true }
        guard needle.count <= haystack.count else { return false }
        let last = haystack.count - needle.count
        var index = 0
        while index <= last {
            if haystack[index] == first && matches(needle, in: haystack, at: index) {
                return true
            }
            index += 1
        }
        return false
    }

    private static func matches(_ needle: UnsafeRawBufferPointer, in haystack: UnsafeRawBufferPointer, at start: Int)
        -> Bool
    {
        var offset = 1
        while offset < needle.count {
            if haystack[start + offset] != needle[offset] { return false }
            offset += 1
        }
        return true
    }
}
