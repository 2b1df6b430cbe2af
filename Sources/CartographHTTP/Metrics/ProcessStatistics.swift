// The process's resident memory and file descriptors, read from /proc when /metrics is scraped (Linux,
// the platform the server ships for; elsewhere they are absent rather than wrong).
import Foundation

/// What `/proc/self` says about this process now; nil where it could not be read.
struct ProcessStatistics {
    /// Bytes of memory resident in RAM (`/proc/self/statm`'s second field, in pages).
    var residentBytes: Int?
    /// File descriptors open (the entries of `/proc/self/fd`, the one listing them included).
    var openDescriptors: Int?
    /// The soft limit on file descriptors (`RLIMIT_NOFILE`).
    var maxDescriptors: Int?

    static func current() -> ProcessStatistics {
        var statistics = ProcessStatistics()
        if let statm = readSmallFile("/proc/self/statm"), let pages = statm.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) {
            statistics.residentBytes = pages * sysconf(Int32(_SC_PAGESIZE))
        }
        statistics.openDescriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.count
        var limit = rlimit()
        // An unlimited limit (RLIM_INFINITY, all bits set) is left out.
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(Int.max) {
            statistics.maxDescriptors = Int(limit.rlim_cur)
        }
        return statistics
    }

    /// The text of a short /proc file, in one read (/proc reports a size of 0, so no size is asked for).
    private static func readSmallFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 256)
        let count = read(descriptor, &bytes, bytes.count)
        guard count > 0 else { return nil }
        return String(decoding: bytes[..<count], as: UTF8.self)
    }
}
