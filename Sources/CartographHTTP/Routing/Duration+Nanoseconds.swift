// Durations as the APIs around us count them (metrics' nanoseconds, Dispatch's timers).

extension Duration {
    /// Whole nanoseconds, rounded toward zero.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
