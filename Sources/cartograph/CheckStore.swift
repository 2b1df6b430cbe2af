// `cartograph check-store`: what an operator runs on a store that answered `store-corrupt` (SECURITY.md).
import ArgumentParser
import Foundation
import CartographStore

struct CheckStore: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-store",
        abstract: "Check store files (<data-dir>/tenants/<tenant>/<model>.sqlite) for damage, read-only.",
        discussion: "Prints 'ok' or each problem SQLite's integrity check finds, per file; exits 1 when any file is damaged. "
            + "Safe while the server runs. A damaged store is restored from a backup, then the server restarted."
    )

    @Argument(help: "Store files to check.")
    var files: [String]

    func run() throws {
        var damaged = false
        for file in files {
            let problems = StoreCheck.problems(path: file)
            if problems.isEmpty {
                print("\(file): ok")
            } else {
                damaged = true
                for problem in problems { print("\(file): \(problem)") }
            }
        }
        if damaged { throw ExitCode(1) }
    }
}
