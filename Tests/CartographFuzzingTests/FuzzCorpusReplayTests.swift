// Replays the checked-in fuzz inputs — the seed corpora (Fuzz/Corpus/<target>) and every crasher
// kept from a fuzzing run (Fuzz/Regressions/<target>) — through each target's properties,
// uninstrumented, so `make test` keeps them fixed without running libFuzzer (docs/fuzzing.md).
// A property broken again fails the test with its name; a crash fails the run.
import CartographFuzzing
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct FuzzCorpusReplayTests {
    static let fuzzDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Fuzz").standardizedFileURL

    /// The checked-in inputs of `target`, seeds first, each directory in name order.
    static func inputs(of target: FuzzTarget) throws -> [URL] {
        try ["Corpus", "Regressions"].flatMap { kind -> [URL] in
            let directory = fuzzDirectory.appendingPathComponent(kind).appendingPathComponent(target.rawValue)
            guard FileManager.default.fileExists(atPath: directory.path) else { return [] }
            return try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
                .filter { !$0.lastPathComponent.hasPrefix(".") }
                .sorted { $0.lastPathComponent < $1.lastPathComponent }
        }
    }

    /// CPU time of the calling thread, so that a busy machine does not make an input look slow.
    static func threadCPUTime() -> Duration {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return .seconds(Int64(now.tv_sec)) + .nanoseconds(Int64(now.tv_nsec))
    }

    @Test(arguments: FuzzTarget.allCases)
    func replaysSeedsAndCrashers(target: FuzzTarget) throws {
        let inputs = try Self.inputs(of: target)
        #expect(!inputs.isEmpty, "no checked-in inputs for \(target.rawValue) under \(Self.fuzzDirectory.path)")
        for input in inputs {
            let bytes = [UInt8](try Data(contentsOf: input))
            let start = Self.threadCPUTime()
            do { try target.check(bytes) } catch { Issue.record("\(target.rawValue)/\(input.lastPathComponent): \(error)") }
            // The libFuzzer runs allow 10 s per input (instrumented); a debug build gets 2 s here.
            let elapsed = Self.threadCPUTime() - start
            #expect(elapsed < .seconds(2), "\(target.rawValue)/\(input.lastPathComponent) took \(elapsed) of CPU time")
        }
    }
}
