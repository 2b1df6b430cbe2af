// The jobs waiting for a request worker, taken by tenant in turn (issue 30, noisy neighbours): a tenant
// with many payloads queued is served one job at a time between the others', so another tenant's
// request waits for at most one job per worker, not for the whole queue ahead of it.

/// Jobs by key (the tenant, "" for requests outside one), each key's in submission order, the keys in turn.
struct TenantTurns<Job> {
    /// Waiting jobs of each key that has any.
    private var waiting: [String: [Job]] = [:]
    /// Keys with waiting jobs, the next to be served first.
    private var turns: [String] = []

    var isEmpty: Bool { turns.isEmpty }

    mutating func append(_ job: Job, key: String) {
        if waiting[key] == nil { turns.append(key) }
        waiting[key, default: []].append(job)
    }

    /// The first job of the key whose turn it is; that key, if it has more, goes to the back.
    mutating func next() -> Job? {
        guard !turns.isEmpty else { return nil }
        let key = turns.removeFirst()
        guard var jobs = waiting.removeValue(forKey: key), !jobs.isEmpty else { return nil }
        let job = jobs.removeFirst()
        if !jobs.isEmpty {
            waiting[key] = jobs
            turns.append(key)
        }
        return job
    }
}
