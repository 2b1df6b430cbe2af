// The lock a store's writes take turns on.
import Foundation

/// A lock whose waiters sleep. A store's write lock is held for a whole write transaction, milliseconds
/// at a time. Synchronization's `Mutex` is a priority-inheritance futex on Linux, and the kernel lets
/// its waiters spin while the holder runs: a second poster burned a core doing nothing (issue 14's
/// re-load profile: 16% of the server's samples), the core the first one's parse and the clients needed.
/// `NSLock` is a plain `pthread_mutex_t`, whose waiters block in the kernel.
final class WriteLock: Sendable {
    private let lock = NSLock()

    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// Runs `body` if no one holds the lock; nil otherwise (nothing waits).
    func withLockIfAvailable<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T? {
        guard lock.try() else { return nil }
        defer { lock.unlock() }
        return try body()
    }
}
