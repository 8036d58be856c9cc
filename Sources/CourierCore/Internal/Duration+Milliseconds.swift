extension Duration {
    /// The whole milliseconds in the duration (rounded towards zero), as log metadata counts them.
    var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
