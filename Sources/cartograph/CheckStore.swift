// `cartograph check-store`: what an operator runs on a store that answered `store-corrupt` (SECURITY.md).
import ArgumentParser
import Foundation
import CartographStore

struct CheckStore: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-store",
        abstract: "Check store files (<data-dir>/tenants/<tenant>/<model>.sqlite) for damage, read-only.",
        discussion: "Prints 'ok' per sound file; for a damaged one, each damaged part ('damaged: table ... (what it holds): why'), "
            + "then what SQLite's integrity check found ('sqlite: ...'). Exits 1 when any file is damaged. "
            + "Safe while the server runs. A damaged store is restored from a backup, then the server restarted."
    )

    @Argument(help: "Store files to check.")
    var files: [String]

    func run() throws {
        var damaged = false
        for file in files {
            let report = StoreCheck.check(path: file)
            if report.isSound {
                print("\(file): ok")
            } else {
                damaged = true
                for part in report.damaged { print("\(file): damaged: \(part)") }
                for finding in report.findings { print("\(file): sqlite: \(finding)") }
            }
        }
        if damaged { throw ExitCode(1) }
    }
}
