// R-S11: requests with a body are answered by request workers, tenants taking turns, at a lower CPU
// priority than the request threads (issue 30: one tenant's payloads must not hold up another's reads).
import Foundation
import Synchronization
import Testing
import CartographTesting
@testable import CartographHTTP

@Suite struct RequestWorkersTests {
    @Test func R_S11_tenantsTakeTurnsInTheWorkersQueue() {
        var turns = TenantTurns<String>()
        for (tenant, job) in [("a", "a1"), ("a", "a2"), ("a", "a3"), ("b", "b1"), ("c", "c1"), ("b", "b2")] {
            turns.append(job, key: tenant)
        }
        var taken: [String] = []
        while let job = turns.next() { taken.append(job) }
        #expect(taken == ["a1", "b1", "c1", "a2", "b2", "a3"])
        #expect(turns.isEmpty)
    }

    @Test func R_S11_aTenantsQueuedPayloadsDoNotGoBeforeAnotherTenantsPayload() {
        // One worker, held by a1 while a2 and a3, then b1, are queued: b1 runs right after a2, not after a3.
        let workers = RequestWorkers(count: 1, stackBytes: 1 << 20, niceness: 0)
        let order = Mutex<[String]>([])
        let release = DispatchSemaphore(value: 0), started = DispatchSemaphore(value: 0), done = DispatchGroup()
        func submit(_ tenant: String, _ name: String, wait: Bool = false) {
            done.enter()
            workers.submit(tenant: tenant) {
                if wait {
                    started.signal()
                    release.wait()
                }
                order.withLock { $0.append(name) }
                done.leave()
            }
        }
        submit("a", "a1", wait: true)
        started.wait()
        submit("a", "a2")
        submit("a", "a3")
        submit("b", "b1")
        release.signal()
        done.wait()
        workers.stop()
        #expect(order.withLock { $0 } == ["a1", "a2", "b1", "a3"])
    }

    @Test func R_S11_workersRunAtALowerPriorityThanRequestThreads() throws {
        let server = try LiveServer()
        defer { _ = server.stop() }
        // /proc/<pid>/task/<tid>/stat: "tid (comm) state …", the nice value the 17th field after the comm.
        var nice: [String: Set<Int>] = [:]
        let tasks = "/proc/\(server.processIdentifier)/task"
        for tid in try FileManager.default.contentsOfDirectory(atPath: tasks) {
            guard let stat = try? String(contentsOfFile: "\(tasks)/\(tid)/stat", encoding: .utf8),
                  let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { continue }
            let comm = String(stat[stat.index(after: open)..<close])
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            nice[comm.hasPrefix("cartograph-w") ? "worker" : comm, default: []].insert(Int(fields[16]) ?? -100)
        }
        #expect(nice["worker"] == [Int(MicroHTTPDServer.workerNiceness)], "every worker at the workers' nice value: \(nice)")
        #expect(nice["MHD-single"] == [0], "the request threads at the process's: \(nice)")
    }
}
