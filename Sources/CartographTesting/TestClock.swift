// The tests' wall clock: it stands still until a test moves it, so that time-stamped answers are known
// exactly and a lifetime (an Idempotency-Key's, a snapshot session's) passes without sleeping.
public import Foundation
import Synchronization
public import CartographCore

/// A wall clock a test sets and moves.
public final class TestClock: Sendable {
    private let current: Mutex<Date>

    public init(at start: Date = Date()) { current = Mutex(start) }

    /// What the server under test is given as its clock.
    public var clock: WallClock { WallClock { [self] in now() } }

    public func now() -> Date { current.withLock { $0 } }

    public func advance(hours: Double) { current.withLock { $0 += hours * 3600 } }
}
