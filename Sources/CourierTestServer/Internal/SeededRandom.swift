#if TestServer
    /// SplitMix64: a small, fast, deterministic generator for `/bytes/{n}?seed=` and friends.
    struct SeededRandom: RandomNumberGenerator {
        private var state: UInt64

        init(seed: UInt64) {
            state = seed
        }

        /// A generator seeded from `text` when it is an integer, else from the system generator.
        init(seedText text: String?) {
            if let text, let seed = Int64(text) {
                self.init(seed: UInt64(bitPattern: seed))
            } else {
                var system = SystemRandomNumberGenerator()
                self.init(seed: system.next())
            }
        }

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var value = state
            value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
            value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
            return value ^ (value >> 31)
        }

        /// `count` pseudo-random bytes.
        mutating func bytes(_ count: Int) -> [UInt8] {
            var output = [UInt8](repeating: 0, count: count)
            var index = 0
            while index < count {
                var word = next()
                for _ in 0..<8 where index < count {
                    output[index] = UInt8(truncatingIfNeeded: word)
                    word >>= 8
                    index += 1
                }
            }
            return output
        }
    }
#endif
