// Threads that answer requests with a body off the transport's threads. A connection stays with
// the request thread that accepted it, and two connections can share one: two clients posting payloads
// over one keep-alive connection each then had their requests answered one after the other on one core
// in a quarter to a third of runs (bench/ingest.sh's re-load at ~95% CPU instead of ~140%), and one
// tenant's payloads held up another tenant's GETs on their thread. A request with a body is worth a
// suspend and resume of its connection (a few microseconds against its milliseconds of mapping): it
// waits here for the next free worker, whichever thread accepted it, in its tenant's turn.
import Foundation
import Synchronization

final class RequestWorkers: Sendable {
    /// Jobs by tenant, taken in turn (a handful at a time: one per connection posting a body).
    private let queue = Mutex(TenantTurns<@Sendable () -> Void>())
    /// Counts the jobs waiting in `queue`, and one wake-up per worker at `stop`.
    private let waiting = DispatchSemaphore(value: 0)
    /// Entered by each worker until it ends.
    private let running = DispatchGroup()
    let count: Int

    /// Starts `count` workers, each with a stack of `stackBytes` (mapping recurses once per nesting level),
    /// at `niceness` (see `ServerConfiguration.workerNiceness`).
    init(count: Int, stackBytes: Int, niceness: Int32) {
        self.count = max(1, count)
        for index in 0..<self.count {
            running.enter()
            let thread = Thread { [self] in
                // Linux keeps a nice value per thread, and `who` 0 names the calling thread only; raising it
                // needs no privilege. A failure leaves the worker at the process's priority.
                _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness)
                // The kernel's name of the thread, as `top -H` and /proc show it (Thread.name does not reach it
                // on Linux, and pthread_setname_np is not imported); at most 15 bytes.
                try? "cartograph-w\(index)".write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
                work()
                running.leave()
            }
            thread.stackSize = stackBytes
            thread.start()
        }
    }

    /// Runs `job` on the next free worker, in `tenant`'s turn.
    func submit(tenant: String, _ job: @escaping @Sendable () -> Void) {
        queue.withLock { $0.append(job, key: tenant) }
        waiting.signal()
    }

    private let stopped = Atomic<Bool>(false)

    /// Lets the workers end once the jobs already submitted are done, and waits for that (nothing is
    /// submitted after). libmicrohttpd aborts the process when its daemon is stopped with a connection
    /// still suspended: every job must have resumed its connection before the daemon stops, as a request
    /// on a request thread is finished before that thread is joined.
    func stop() {
        if !stopped.exchange(true, ordering: .acquiringAndReleasing) {
            for _ in 0..<count { waiting.signal() }
        }
        running.wait()
    }

    /// Each wake-up is a job or, once the jobs are taken, one of `stop`'s: a worker finding the queue
    /// empty has been told to end.
    private func work() {
        while true {
            waiting.wait()
            guard let job = queue.withLock({ $0.next() }) else { return }
            job()
        }
    }
}
