// Long polls parked until their store changes (docs/change-feed.md, R-D8). A parked request holds no
// thread: the transport suspends its connection, and its answer is computed on a dispatch queue when
// its store is woken — once it has parked, and after writes to the store (the application calls
// `notify` once a write route has answered) — and at the request's deadline.
//
// A store is woken at most once per `wakeInterval`, and a wake reads once per distinct `pollKey`
// (followers caught up together share their `since`), answering every request of that key from the
// one read. So the commits of an interval cost one wake, and a wake costs one read per position the
// followers are at, not one per follower: when every commit woke each of 200 followers with a read of
// its own, /healthz's p99 went from 7 to 51 ms at 10 commits/s and to 1.3 s under unlimited writers,
// whose rate fell from 750 to 196 commits/s (issue 30).
import Foundation
import Synchronization

final class ChangeWaiters: Sendable {
    /// How often at most a store's parked requests are woken: long enough that a burst of commits is
    /// answered by one wake, short enough that a follower does not notice it.
    static let defaultWakeInterval: Duration = .milliseconds(50)

    private struct Waiter: Sendable {
        let pending: PendingResponse
        /// The refusal the request gets instead of its answer once it may no longer have one (its key revoked,
        /// its tenant deleted), or nil.
        let admission: @Sendable () -> HTTPResponse?
        let resolve: @Sendable (HTTPResponse) -> Void
    }

    /// One store's parked requests, and its wakes.
    private struct StoreWaiters {
        var waiters: [Int: Waiter] = [:]
        var lastWake: ContinuousClock.Instant?
        var wakeScheduled = false
    }

    private struct Parked: ~Copyable {
        var nextID = 0
        var byStore: [String: StoreWaiters] = [:]
        /// The server is stopping: a request is answered at once instead of parked.
        var closed = false
        /// The one timer answering requests at their deadlines: when it fires, and its number (a timer
        /// superseded by an earlier one finds another number and does nothing).
        var sweep: (at: ContinuousClock.Instant, number: Int)?
        var sweepsScheduled = 0
    }

    /// A wake's answers are sent `answersPerSlice` at a time, `slicePause` apart (see `deliverPaced`).
    static let answersPerSlice = 16
    static let defaultSlicePause: Duration = .milliseconds(1)

    let wakeInterval: Duration
    let slicePause: Duration
    private let parked = Mutex(Parked())
    private let queue = DispatchQueue(label: "cartograph.long-poll", attributes: .concurrent)

    init(wakeInterval: Duration = ChangeWaiters.defaultWakeInterval, slicePause: Duration = ChangeWaiters.defaultSlicePause) {
        self.wakeInterval = wakeInterval
        self.slicePause = slicePause
    }

    /// Parks `pending`; `resolve` is called once, on another thread, with its answer — or with what
    /// `admission` answers instead once the request may no longer have one. Its store is woken for it
    /// (at once when the store has not been woken for `wakeInterval`): entries may be there already.
    func park(_ pending: PendingResponse, admission: @escaping @Sendable () -> HTTPResponse?,
              resolve: @escaping @Sendable (HTTPResponse) -> Void) {
        let waiter = Waiter(pending: pending, admission: admission, resolve: resolve)
        let parking = parked.withLock { parked -> Parking in
            guard !parked.closed else { return .refused }
            parked.nextID += 1
            parked.byStore[pending.store, default: StoreWaiters()].waiters[parked.nextID] = waiter
            // Requests mostly wait as long as the ones before them: the deadline timer set already serves them too.
            let sweepAt = pending.deadline + wakeInterval
            guard parked.sweep.map({ sweepAt < $0.at }) ?? true else { return .parked(newSweep: nil) }
            parked.sweepsScheduled += 1
            parked.sweep = (sweepAt, parked.sweepsScheduled)
            return .parked(newSweep: parked.sweepsScheduled)
        }
        switch parking {
        case .refused:
            if let answer = pending.poll(true) { resolve(admission() ?? answer) }
        case .parked(let newSweep):
            scheduleWake(pending.store)
            if let newSweep { scheduleSweep(newSweep, at: pending.deadline + wakeInterval) }
        }
    }

    /// What `park` did with a request.
    private enum Parking {
        /// The server is stopping: it is answered at once.
        case refused
        /// Parked; with the number of the deadline timer to set when its deadline is the earliest.
        case parked(newSweep: Int?)
    }

    /// Requests parked now (the `cartograph_long_polls_parked` gauge).
    var parkedCount: Int { parked.withLock { $0.byStore.values.reduce(0) { $0 + $1.waiters.count } } }

    /// A write to `store` committed: its parked requests are woken, at most once per `wakeInterval`.
    func notify(_ store: String) { scheduleWake(store) }

    /// Answers at once, with their refusal, the parked requests of `tenant` that may no longer have an
    /// answer: the tenant was deleted, or a key revoked. The others go on waiting.
    func dismissRefused(tenant: String) {
        queue.async { [self] in
            let candidates = parked.withLock { parked in
                parked.byStore.filter { $0.key.hasPrefix("\(tenant)/") }.flatMap { store, entry in
                    entry.waiters.map { (store: store, id: $0.key, waiter: $0.value) }
                }
            }
            for candidate in candidates {
                if let refusal = candidate.waiter.admission() { deliver(candidate.id, store: candidate.store, candidate.waiter, refusal) }
            }
        }
    }

    /// Answers every parked request now, before returning, and every request that would park from now on
    /// at once (the server is draining: libmicrohttpd aborts the process when its daemon is stopped with a
    /// connection still suspended, so none may be left waiting).
    func answerAll() {
        let all = parked.withLock { parked in
            parked.closed = true
            return parked.byStore.mapValues { $0.waiters.map { (id: $0.key, waiter: $0.value) } }
        }
        for (store, members) in all { answer(members, of: store, final: true, paced: false) }
    }

    /// Wakes `store` once `wakeInterval` has passed since its last wake (at once if it has), unless a wake
    /// is due already; nothing when no request waits on it.
    private func scheduleWake(_ store: String) {
        let delay = parked.withLock { parked -> Duration? in
            guard var entry = parked.byStore[store], !entry.wakeScheduled else { return nil }
            entry.wakeScheduled = true
            parked.byStore[store] = entry
            let now = ContinuousClock.now
            return entry.lastWake.map { max(.zero, $0 + wakeInterval - now) } ?? .zero
        }
        guard let delay else { return }
        queue.asyncAfter(deadline: .now() + Self.dispatchInterval(delay)) { self.wake(store) }
    }

    /// One timer for every deadline, set for the earliest, `wakeInterval` after it so that it answers the
    /// requests whose deadlines follow within that time too: a timer per request (200 followers come back
    /// 20 times a second each) woke libdispatch's timer thread at every park, and kept each timer 30 s after
    /// its request was answered.
    private func scheduleSweep(_ number: Int, at instant: ContinuousClock.Instant) {
        queue.asyncAfter(deadline: .now() + Self.dispatchInterval(instant - ContinuousClock.now)) { self.sweepDeadlines(number) }
    }

    /// Answers the requests whose deadline has come, and sets the timer for the next deadline.
    private func sweepDeadlines(_ number: Int) {
        let now = ContinuousClock.now
        let swept = parked.withLock { parked -> (due: [String: [(id: Int, waiter: Waiter)]], next: (Int, ContinuousClock.Instant)?)? in
            guard parked.sweep?.number == number else { return nil }
            var due: [String: [(id: Int, waiter: Waiter)]] = [:]
            var next: ContinuousClock.Instant?
            for (store, entry) in parked.byStore {
                for (id, waiter) in entry.waiters {
                    let deadline = waiter.pending.deadline
                    if deadline <= now { due[store, default: []].append((id, waiter)) } else { next = min(next ?? deadline, deadline) }
                }
            }
            guard let next else {
                parked.sweep = nil
                return (due, nil)
            }
            parked.sweepsScheduled += 1
            parked.sweep = (next + wakeInterval, parked.sweepsScheduled)
            return (due, (parked.sweepsScheduled, next + wakeInterval))
        }
        guard let swept else { return }
        if let (next, instant) = swept.next { scheduleSweep(next, at: instant) }
        for (store, members) in swept.due { answer(members, of: store, final: true, paced: true) }
    }

    /// Answers the store's parked requests whose poll key finds something; the others go on waiting.
    private func wake(_ store: String) {
        let waiters = parked.withLock { parked -> [(id: Int, waiter: Waiter)] in
            guard var entry = parked.byStore[store] else { return [] }
            guard !entry.waiters.isEmpty else {
                parked.byStore[store] = nil
                return []
            }
            // Cleared before the reads: a commit from now on schedules the next wake, so none goes unseen.
            entry.wakeScheduled = false
            entry.lastWake = .now
            parked.byStore[store] = entry
            return entry.waiters.map { ($0.key, $0.value) }
        }
        answer(waiters, of: store, final: false, paced: true)
    }

    /// Answers `members`, requests parked on `store`, from one `poll` per poll key: those whose key found
    /// something, or with `final` (their deadline has come) every one. `paced`: in slices (`deliverPaced`);
    /// otherwise all before returning.
    private func answer(_ members: [(id: Int, waiter: Waiter)], of store: String, final: Bool, paced: Bool) {
        var answered: [Answered] = []
        for group in Dictionary(grouping: members, by: \.waiter.pending.pollKey).values {
            guard let answer = group[0].waiter.pending.poll(final) else { continue }
            answered += group.map { Answered(id: $0.id, waiter: $0.waiter, answer: answer) }
        }
        if paced {
            deliverPaced(answered[...], store: store)
        } else {
            for member in answered { deliver(member.id, store: store, member.waiter, member.answer) }
        }
    }

    /// A parked request and the answer read for it.
    private struct Answered: Sendable {
        let id: Int
        let waiter: Waiter
        let answer: HTTPResponse
    }

    /// Sends `answered` `answersPerSlice` at a time, `slicePause` apart. Each answer brings its follower's
    /// next request a moment later, and the request threads serve those beside /healthz and every GET: a
    /// wake's 200 answers sent at once kept them busy for milliseconds (200 followers at 10 commits/s,
    /// server on one core: /healthz p99 5.6-7.2 ms against 1.3-1.4 quiet; in slices 2.0-2.9 ms). The last
    /// of 200 is sent 12 ms after the first.
    private func deliverPaced(_ answered: ArraySlice<Answered>, store: String) {
        let slice = answered.prefix(Self.answersPerSlice)
        for member in slice { deliver(member.id, store: store, member.waiter, member.answer) }
        let rest = answered.dropFirst(slice.count)
        guard !rest.isEmpty else { return }
        queue.asyncAfter(deadline: .now() + Self.dispatchInterval(slicePause)) { self.deliverPaced(rest, store: store) }
    }

    /// Takes the request out and answers it, unless another attempt did (only the one that takes it out
    /// answers). Its admission is asked after `answer` was read: a key revoked before that read gets
    /// nothing the read found. A store left without requests keeps its last wake for the interval (its
    /// followers come back at once), then a wake finding none forgets it.
    private func deliver(_ id: Int, store: String, _ waiter: Waiter, _ answer: HTTPResponse) {
        let (taken, emptied) = parked.withLock { parked -> (Bool, Bool) in
            guard parked.byStore[store]?.waiters.removeValue(forKey: id) != nil else { return (false, false) }
            return (true, parked.byStore[store]?.waiters.isEmpty == true)
        }
        guard taken else { return }
        waiter.resolve(waiter.admission() ?? answer)
        if emptied { scheduleWake(store) }
    }

    /// `duration` for `DispatchQueue.asyncAfter`, negative ones as zero.
    private static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        .nanoseconds(Int(max(0, duration.nanoseconds)))
    }
}
