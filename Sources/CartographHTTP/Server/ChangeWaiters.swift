// Long polls parked until their store changes (docs/change-feed.md, R-D8). A parked request holds no
// thread: the transport suspends its connection, and an answer is computed on a dispatch queue after
// each write to the store (the application calls `notify` once a write route has answered) and at the
// request's deadline.
import Foundation
import Synchronization

final class ChangeWaiters: Sendable {
    private struct Waiter: Sendable {
        let pending: PendingResponse
        let resolve: @Sendable (HTTPResponse) -> Void
    }

    private struct Parked: ~Copyable {
        var nextID = 0
        var byStore: [String: [Int: Waiter]] = [:]
        /// The server is stopping: a request is answered at once instead of parked.
        var closed = false
    }

    private let parked = Mutex(Parked())
    private let queue = DispatchQueue(label: "cartograph.long-poll", attributes: .concurrent)

    /// Parks `pending`; `resolve` is called once, on another thread, with its answer. The store is polled
    /// once right away: a write that committed between the request's first read and now sent no notice.
    func park(_ pending: PendingResponse, resolve: @escaping @Sendable (HTTPResponse) -> Void) {
        let parkedID = parked.withLock { parked -> Int? in
            guard !parked.closed else { return nil }
            parked.nextID += 1
            parked.byStore[pending.store, default: [:]][parked.nextID] = Waiter(pending: pending, resolve: resolve)
            return parked.nextID
        }
        guard let id = parkedID else {
            if let answer = pending.poll(true) { resolve(answer) }
            return
        }
        queue.async { self.attempt(id, store: pending.store, final: false) }
        let delay = pending.deadline - ContinuousClock.now
        let nanoseconds = max(0, delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000)
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) { self.attempt(id, store: pending.store, final: true) }
    }

    /// A write to `store` committed: every request parked on it looks again.
    func notify(_ store: String) {
        let ids = parked.withLock { $0.byStore[store].map { Array($0.keys) } ?? [] }
        for id in ids { queue.async { self.attempt(id, store: store, final: false) } }
    }

    /// Answers every parked request now, before returning, and every request that would park from now on
    /// at once (the server is draining: libmicrohttpd aborts the process when its daemon is stopped with a
    /// connection still suspended, so none may be left waiting).
    func answerAll() {
        let all = parked.withLock { parked in
            parked.closed = true
            return parked.byStore.flatMap { store, waiters in waiters.keys.map { (store, $0) } }
        }
        for (store, id) in all { attempt(id, store: store, final: true) }
    }

    private func attempt(_ id: Int, store: String, final: Bool) {
        guard let waiter = parked.withLock({ $0.byStore[store]?[id] }), let answer = waiter.pending.poll(final) else { return }
        // Two attempts may both find an answer; only the one that takes the waiter out gives it.
        let taken = parked.withLock { parked -> Bool in
            guard parked.byStore[store]?.removeValue(forKey: id) != nil else { return false }
            if parked.byStore[store]?.isEmpty == true { parked.byStore[store] = nil }
            return true
        }
        if taken { waiter.resolve(answer) }
    }
}
